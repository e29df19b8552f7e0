/// Why an OAuth assertion could not be made or did not verify. Never contains the assertion or a key.
public struct FCMAssertionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The key could not sign (or the verifier's public key is not an RSA key).
        case invalidKey
        case signingFailed
        /// Not three base64url parts of JSON objects, or a required claim is missing or of the wrong type.
        case malformed
        case unsupportedAlgorithm
        /// `kid` is not the key the verifier knows.
        case unknownKey
        case badSignature
        /// `scope`, `aud` or `iss` is not what was expected, or `exp` is not after `iat` by at most an hour.
        case invalidClaims
        case expired
        case issuedInFuture
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for the operator, without any secret.
    public var message: String

    /// Creates an error; `message` must not contain the assertion or a key.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
