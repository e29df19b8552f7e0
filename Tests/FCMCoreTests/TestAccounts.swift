import FCMCore
import Foundation
import _CryptoExtras

/// Keys and key files for the tests. RSA key generation is slow, so each key is made once.
enum TestAccounts {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let otherKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static let account = FCMServiceAccount(
        projectID: "herald-test", privateKeyID: "0123456789abcdef0123456789abcdef01234567",
        clientEmail: "herald@herald-test.iam.gserviceaccount.com", privateKey: key)

    /// The fields of a valid key file as Google issues it (PKCS#8 PEM).
    static var fields: [String: Any] {
        [
            "type": "service_account",
            "project_id": "herald-test",
            "private_key_id": "0123456789abcdef0123456789abcdef01234567",
            "private_key": key.pkcs8PEMRepresentation,
            "client_email": "herald@herald-test.iam.gserviceaccount.com",
            "client_id": "123456789012345678901",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": "https://oauth2.googleapis.com/token",
        ]
    }

    /// A key file's bytes: the valid fields, changed by `changes` (nil removes a field).
    static func keyFile(_ changes: [String: Any?] = [:]) -> [UInt8] {
        var fields = self.fields
        for (name, value) in changes { fields[name] = value }
        return Array(try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    /// The base64 body of the test key's PEM (the secret part), to look for in descriptions.
    static var secretMaterial: [String] {
        let lines = key.pkcs8PEMRepresentation.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        return lines.map(String.init) + [String(lines[1].prefix(24))]
    }

    /// Whether `text` holds any part of the test key.
    static func leaksKey(_ text: String) -> Bool {
        text.contains("PRIVATE KEY") || secretMaterial.contains { text.contains($0) }
    }
}
