import Crypto
import Foundation
import HeraldCore
import WebPushCore

extension Doctor {
    /// An app's `webpush` block: the VAPID key file holds a P-256 private key, the subject is one Apple takes, and a
    /// token signed with the key verifies against its public half (what every push service checks). Push services
    /// are reached only through subscriptions, so no request is sent here.
    func checkWebPush(_ app: AppConfiguration, directory: String) -> [DoctorFinding] {
        guard let settings = app.webpush else { return [] }
        let subject = "app \(app.id) webpush"
        let key: VAPIDKey
        do {
            guard let read = try app.vapidKey(directory: directory) else { return [] }
            key = read
        } catch {
            return [
                .fail(subject, "\(error.message): fix vapid_private_key_file (herald webpush generate-key makes one)")
            ]
        }
        guard let vapidSubject = settings.vapidSubject else {
            return [.fail(subject, "subject \(settings.subject.prefix(80)) is not a mailto: address or https: URL")]
        }
        let token = key.sign(audience: "https://web.push.apple.com", subject: vapidSubject, expiresAt: 4_102_444_800)
        guard Self.verifies(token.jwt, publicKey: key.publicKey) else {
            return [.fail(subject, "a VAPID token signed with the key does not verify against its public half")]
        }
        return [
            .pass(
                subject,
                "VAPID key \(key.keyID) signs tokens that verify; subject \(vapidSubject.value); application server "
                    + "key: herald webpush key --app \(app.id)")
        ]
    }

    /// Whether a JWT's ES256 signature verifies with `publicKey` (65 bytes uncompressed).
    static func verifies(_ jwt: String, publicKey: [UInt8]) -> Bool {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Self.base64URL(parts[2]),
            let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
    }

    private static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
