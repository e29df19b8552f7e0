/// One request the simulator received, with the answer it gave: what tests check retry behaviour against (no
/// request before a `Retry-After` has passed, no 400, 403 or 404 sent twice).
public struct FCMSimulatorRequestRecord: Sendable, Hashable {
    /// Which endpoint the path named.
    public enum Endpoint: String, Sendable, Hashable, Codable {
        /// The OAuth token endpoint.
        case token
        /// `/v1/projects/{project}/messages:send`.
        case send
        /// Any other path (answered 404).
        case other
    }

    /// Which endpoint the path named.
    public var endpoint: Endpoint
    /// When it arrived, in seconds since 1970 (``FCMSimulatorConfiguration/now``).
    public var receivedAt: Int64
    /// The HTTP status answered; 0 when the connection was dropped instead (fault injection).
    public var status: Int
    /// The FCM `errorCode` (send) or OAuth `error` (token endpoint) answered; nil for 200 and for errors without one.
    public var errorCode: String?
    /// The recipient, when the body named one.
    public var target: FCMSimulatorTarget?
    /// The `Retry-After` answered, in seconds.
    public var retryAfter: Int?
    /// Whether the request asked for `validate_only`.
    public var validateOnly: Bool
    /// `HTTP/2` or `HTTP/1.1`.
    public var httpVersion: String

    /// Creates a record.
    public init(
        endpoint: Endpoint,
        receivedAt: Int64,
        status: Int,
        errorCode: String? = nil,
        target: FCMSimulatorTarget? = nil,
        retryAfter: Int? = nil,
        validateOnly: Bool = false,
        httpVersion: String
    ) {
        self.endpoint = endpoint
        self.receivedAt = receivedAt
        self.status = status
        self.errorCode = errorCode
        self.target = target
        self.retryAfter = retryAfter
        self.validateOnly = validateOnly
        self.httpVersion = httpVersion
    }
}
