import Crypto
import _CryptoExtras

/// A Google service account read from its JSON key file: the project to send for, and the identity and RSA key
/// that sign the OAuth assertion exchanged for an access token.
///
/// Its `description` names only the project and the client email: the private key never leaves this value except
/// through a signature.
public struct FCMServiceAccount: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// `project_id`: the project in the send URL (a project id, or a numeric project number).
    public let projectID: String
    /// `private_key_id`: the `kid` of every assertion.
    public let privateKeyID: String
    /// `client_email`: the `iss` of every assertion.
    public let clientEmail: String
    /// `token_uri`: where assertions are exchanged for access tokens (`aud` of every assertion).
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// The largest key file read; a real one is about 2.3 KB.
    public static let maximumFileSize = 64 * 1024
    /// The token endpoint used when the file names none.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"
    /// The smallest RSA key accepted, in bits.
    public static let minimumKeyBits = 2048

    /// Parses and validates the contents of a key file.
    public init(json bytes: some Collection<UInt8>) throws(FCMServiceAccountError) {
        guard bytes.count <= Self.maximumFileSize else {
            throw FCMServiceAccountError(.tooLarge, field: nil, "is larger than \(Self.maximumFileSize) bytes")
        }
        let parsed: JSON
        do {
            parsed = try JSON.parse(bytes)
        } catch {
            throw FCMServiceAccountError(.malformedJSON, field: nil, "is \(error.description)")
        }
        guard let fields = parsed.object else {
            throw FCMServiceAccountError(.malformedJSON, field: nil, "is not a JSON object")
        }
        let reader = FieldReader(fields: fields)
        guard try reader.string("type") == "service_account" else {
            throw FCMServiceAccountError(.invalidField, field: "type", "is not \"service_account\"")
        }
        self.projectID = try reader.string("project_id")
        try Self.validateProjectID(projectID)
        self.privateKeyID = try reader.string("private_key_id")
        guard Validation.isIdentifier(privateKeyID, maximumLength: 128) else {
            throw FCMServiceAccountError(.invalidField, field: "private_key_id", "is not 1–128 letters and digits")
        }
        self.clientEmail = try reader.string("client_email")
        guard Validation.isEmail(clientEmail) else {
            throw FCMServiceAccountError(.invalidField, field: "client_email", "is not an email address")
        }
        self.tokenURI = try reader.optionalString("token_uri") ?? Self.defaultTokenURI
        guard Validation.isHTTPSURL(tokenURI) else {
            throw FCMServiceAccountError(.invalidField, field: "token_uri", "is not an https URL")
        }
        self.privateKey = try Self.parsePrivateKey(try reader.string("private_key"))
    }

    /// An account made in memory (tests, tools). The fields are trusted as given.
    public init(
        projectID: String,
        privateKeyID: String,
        clientEmail: String,
        tokenURI: String = defaultTokenURI,
        privateKey: _RSA.Signing.PrivateKey
    ) {
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        self.privateKey = privateKey
    }

    /// The public half of the key as PEM (SubjectPublicKeyInfo), for a verifier.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// The RSA key's size in bits.
    public var keySizeInBits: Int { privateKey.keySizeInBits }

    public var description: String { "FCMServiceAccount(project: \(projectID), client: \(clientEmail))" }
    public var debugDescription: String { description }
}
