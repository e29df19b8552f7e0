/// The token endpoint's answer `{"access_token","expires_in","token_type"}`, read and checked.
///
/// Its `description` never shows the token.
public struct FCMTokenResponse: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The largest answer read.
    public static let maximumBodySize = 64 * 1024
    /// The longest access token accepted (Google's are about 1 KB).
    public static let maximumTokenLength = 4096
    /// The accepted range of `expires_in`, in seconds.
    public static let expiresInRange: ClosedRange<Int64> = 1...86_400

    /// The bearer token. Never logged.
    public let accessToken: String
    /// Its lifetime in seconds from the answer.
    public let expiresIn: Int64
    /// `token_type` as sent (`Bearer`).
    public let tokenType: String

    /// Reads the answer to a token request: on 200 the token, otherwise the OAuth error as `FCMTokenError`.
    public init(status: Int, body: some Collection<UInt8>) throws(FCMTokenError) {
        guard body.count <= Self.maximumBodySize else {
            throw FCMTokenError(.answerTooLarge, status: status, "answer larger than \(Self.maximumBodySize) bytes")
        }
        let fields = (try? JSON.parse(body))?.object
        guard status == 200 else {
            if let error = fields?["error"]?.string {
                throw FCMTokenError(
                    .refused, status: status, error: error, errorDescription: fields?["error_description"]?.string,
                    "refused the assertion")
            }
            throw FCMTokenError(.unexpectedStatus, status: status, "answered without an OAuth error")
        }
        guard let fields else { throw FCMTokenError(.malformedAnswer, status: status, "answer is not a JSON object") }
        guard let token = fields["access_token"]?.string, !token.isEmpty,
            token.utf8.count <= Self.maximumTokenLength, token.utf8.allSatisfy(Validation.isPlainPrintable)
        else {
            throw FCMTokenError(
                .malformedAnswer, status: status,
                "access_token is missing, empty, longer than \(Self.maximumTokenLength) or not printable ASCII")
        }
        guard let expiresIn = fields["expires_in"]?.int64, Self.expiresInRange.contains(expiresIn) else {
            throw FCMTokenError(.malformedAnswer, status: status, "expires_in is missing or not within 1…86400")
        }
        guard let tokenType = fields["token_type"]?.string, tokenType.lowercased() == "bearer" else {
            throw FCMTokenError(.malformedAnswer, status: status, "token_type is not Bearer")
        }
        self.accessToken = token
        self.expiresIn = expiresIn
        self.tokenType = tokenType
    }

    /// The token as received at `now` (seconds since 1970).
    public func accessToken(receivedAt now: Int64) -> FCMAccessToken {
        FCMAccessToken(value: accessToken, obtainedAt: now, expiresAt: now + expiresIn)
    }

    public var description: String { "FCMTokenResponse(expires_in: \(expiresIn), token_type: \(tokenType))" }
    public var debugDescription: String { description }
}
