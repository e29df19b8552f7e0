import Foundation
import _CryptoExtras

/// The demo's Firebase project: a service account whose RSA key is made for the run, its key file written beside
/// the apps file as the Firebase console exports one, minting at the FCM simulator's token endpoint.
struct DemoFirebase {
    static let projectID = "herald-demo"
    static let clientEmail = "herald-demo@herald-demo.iam.gserviceaccount.com"
    static let fileName = "firebase-demo.json"

    let directory: String
    private let key: _RSA.Signing.PrivateKey

    init(directory: String) throws {
        self.directory = directory
        self.key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    var publicKeyPEM: String { key.publicKey.pemRepresentation }

    /// Writes the key file, minting at `tokenURI`.
    func writeServiceAccount(tokenURI: String) throws {
        let object: [String: String] = [
            "type": "service_account", "project_id": Self.projectID, "private_key_id": "demo-key-1",
            "private_key": key.pemRepresentation + "\n", "client_email": Self.clientEmail, "token_uri": tokenURI,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let path = directory + "/" + Self.fileName
        try data.write(to: URL(fileURLWithPath: path))
        // Only its owner reads a key file.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
