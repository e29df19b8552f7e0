/// Why the token endpoint gave no access token. Carries the endpoint's `error` and `error_description` (made safe:
/// printable, bounded, with anything that looks like a JWT or token removed), never the assertion.
public struct FCMTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The endpoint answered with an OAuth error (`error` holds it, e.g. `invalid_grant`).
        case refused
        /// A success answer that is not a usable token (see `message`).
        case malformedAnswer
        /// An answer over `FCMTokenResponse.maximumBodySize`.
        case answerTooLarge
        /// A non-200 status without a readable OAuth error body.
        case unexpectedStatus
    }

    /// What went wrong.
    public var code: Code
    /// The HTTP status of the answer.
    public var status: Int
    /// The OAuth `error` (`invalid_grant`, `invalid_scope`, …), when the endpoint gave one.
    public var error: String?
    /// The OAuth `error_description`, when the endpoint gave one.
    public var errorDescription: String?
    /// A sentence for the operator.
    public var message: String

    /// Creates an error; the OAuth texts are made safe (printable, bounded, token-like runs redacted).
    public init(_ code: Code, status: Int, error: String? = nil, errorDescription: String? = nil, _ message: String) {
        self.code = code
        self.status = status
        self.error = error.map { Validation.safeText($0, maximumLength: 64) }
        self.errorDescription = errorDescription.map { Validation.safeText($0) }
        self.message = message
    }

    /// Whether the credentials themselves are broken (`invalid_grant`, `invalid_client`, `unauthorized_client`,
    /// `invalid_scope`): retrying cannot help; stop the tenant and alert.
    public var isCredentialFailure: Bool {
        ["invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope"].contains(error ?? "")
    }

    public var description: String {
        var text = "token endpoint: \(message) (HTTP \(status))"
        if let error { text += ": \(error)" }
        if let errorDescription { text += ": \(errorDescription)" }
        return text
    }
}
