import Crypto
import Foundation

/// A Web Push sender written for these tests from RFC 8291 (encryption) and RFC 8292 (VAPID), independent of both
/// the simulator and Herald's WebPushCore: what the simulator decrypts and verifies must come from somewhere else.
struct TestPushSender: Sendable {
    /// The VAPID signing key.
    var vapidKey: P256.Signing.PrivateKey

    /// `k`: base64url of the VAPID public key, uncompressed.
    var vapidPublicKey: String { Self.base64URL(vapidKey.publicKey.x963Representation) }

    /// A JWT with `header` and `claims` as given, signed ES256 by `signer` (default: the VAPID key).
    func token(
        claims: [String: any Sendable], header: [String: String] = ["typ": "JWT", "alg": "ES256"],
        signer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let headerPart = Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let claimPart = Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = headerPart + "." + claimPart
        let signature = try (signer ?? vapidKey).signature(for: Array(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// A valid token for `audience`: `exp` one hour after `now`, a `mailto:` subject.
    func token(audience: String, now: Int64, subject: String = "mailto:push@example.com") throws -> String {
        try token(claims: ["aud": audience, "exp": Int(now + 3600), "sub": subject])
    }

    /// `vapid t=<token>, k=<key>`.
    func authorization(token: String, key: String? = nil) -> String {
        "vapid t=\(token), k=\(key ?? vapidPublicKey)"
    }

    /// RFC 8291 `aes128gcm`: a fresh (or given) ECDH key and salt, one record of `plaintext ‖ delimiter ‖ padding`.
    static func encrypt(
        _ plaintext: [UInt8], p256dh: String, auth: String, padding: Int = 0, recordSize: UInt32 = 4096,
        delimiter: UInt8 = 2, salt: [UInt8]? = nil, senderKey: P256.KeyAgreement.PrivateKey = .init()
    ) throws -> [UInt8] {
        guard let receiverBytes = decodeBase64URL(p256dh), let authBytes = decodeBase64URL(auth) else {
            throw SenderError(message: "p256dh or auth is not base64url")
        }
        let receiver = try P256.KeyAgreement.PublicKey(x963Representation: receiverBytes)
        let salt = salt ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let secret = try senderKey.sharedSecretFromKeyAgreement(with: receiver)
        let ikm = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authBytes,
            sharedInfo: Array("WebPush: info\0".utf8) + receiverBytes + senderPublic, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        let record = plaintext + [delimiter] + [UInt8](repeating: 0, count: padding)
        let sealed = try AES.GCM.seal(
            record, using: cek, nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        let header =
            salt + withUnsafeBytes(of: recordSize.bigEndian) { Array($0) } + [UInt8(senderPublic.count)] + senderPublic
        return header + Array(sealed.ciphertext) + Array(sealed.tag)
    }

    static func base64URL(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}

struct SenderError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
