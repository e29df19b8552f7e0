import Crypto
import Foundation

/// Makes APNs provider tokens: ES256 JWTs with `kid` (key id), `iss` (team id) and `iat` (issued at, seconds).
///
/// The private key never appears in `description`.
public struct ProviderTokenSigner: Sendable, CustomStringConvertible {
    /// The 10-character team id (`iss`).
    public let teamID: String
    /// The 10-character key id (`kid`).
    public let keyID: String
    private let privateKey: P256.Signing.PrivateKey

    /// Creates a signer from the contents of an `AuthKey_….p8` file (PKCS#8 PEM, P-256).
    public init(teamID: String, keyID: String, pemKey: String) throws(ProviderTokenError) {
        do {
            self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: pemKey)
        } catch {
            throw ProviderTokenError(.invalidKey, "the .p8 key is not a P-256 private key in PEM form")
        }
        self.teamID = teamID
        self.keyID = keyID
    }

    /// Creates a signer from a key already in memory.
    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// The public half, PEM-encoded, for a verifier (the simulator).
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// Signs a token issued at `issuedAt` (seconds since 1970).
    public func makeToken(issuedAt: Int64) throws(ProviderTokenError) -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#
        let signingInput = Base64URL.encode(header.utf8) + "." + Base64URL.encode(claims.utf8)
        do {
            let signature = try privateKey.signature(for: Array(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw ProviderTokenError(.signingFailed, "could not sign the provider token")
        }
    }

    public var description: String { "ProviderTokenSigner(team: \(teamID), key: \(keyID))" }
}

/// Why a provider token could not be made or was not accepted. Never contains the key or the token.
public struct ProviderTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        case invalidKey
        case signingFailed
        case malformed
        case unsupportedAlgorithm
        case unknownKey
        case wrongTeam
        case badSignature
        case expired
        case issuedInFuture
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
