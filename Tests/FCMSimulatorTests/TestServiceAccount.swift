import Crypto
import Foundation
import _CryptoExtras

/// A service account of the test project with its RSA key, and the JWT assertions it signs (RS256, as Google's
/// auth libraries do), valid or broken on purpose.
struct TestServiceAccount: Sendable {
    static let main = TestServiceAccount(
        clientEmail: "herald@demo-project.iam.gserviceaccount.com", projectID: "demo-project",
        projectNumber: "123456789012", keyID: "key-1")
    static let otherProject = TestServiceAccount(
        clientEmail: "sender@other-project.iam.gserviceaccount.com", projectID: "other-project",
        projectNumber: nil, keyID: "key-2")
    /// A key no account holds, for bad signatures.
    static let strangerKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    let clientEmail: String
    let projectID: String
    let projectNumber: String?
    let keyID: String
    let key: _RSA.Signing.PrivateKey

    init(clientEmail: String, projectID: String, projectNumber: String?, keyID: String) {
        self.clientEmail = clientEmail
        self.projectID = projectID
        self.projectNumber = projectNumber
        self.keyID = keyID
        self.key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// A signed assertion; every part can be changed to break it.
    func assertion(
        audience: String,
        issuedAt: Int64,
        expiresAt: Int64? = nil,
        scope: String? = messagingScope,
        issuer: String? = nil,
        keyID: String? = nil,
        omitKeyID: Bool = false,
        algorithm: String = "RS256",
        signingKey: _RSA.Signing.PrivateKey? = nil
    ) -> String {
        var header: [String: Any] = ["alg": algorithm, "typ": "JWT"]
        if !omitKeyID { header["kid"] = keyID ?? self.keyID }
        var claims: [String: Any] = [
            "iss": issuer ?? clientEmail, "aud": audience, "iat": issuedAt, "exp": expiresAt ?? issuedAt + 3600,
        ]
        if let scope { claims["scope"] = scope }
        let signingInput = Self.encode(header) + "." + Self.encode(claims)
        let signature = try! (signingKey ?? key).signature(
            for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Self.base64URL(signature.rawRepresentation)
    }

    private static func encode(_ object: [String: Any]) -> String {
        base64URL(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
