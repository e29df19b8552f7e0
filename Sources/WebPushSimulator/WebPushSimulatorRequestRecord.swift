/// One request the simulator received, with the answer it gave: what tests check retry behaviour against (no
/// request before a `Retry-After` has passed, no 4xx sent twice).
public struct WebPushSimulatorRequestRecord: Sendable, Hashable {
    /// The subscription id from the path; nil when the path is not under the push prefix.
    public var subscriptionID: String?
    /// The HTTP status answered; 0 when the connection was dropped instead (fault injection).
    public var status: Int
    /// The `reason` answered (`BadJwtToken`, …); nil for 201.
    public var reason: String?
    /// When it arrived, in seconds since 1970 (``WebPushSimulatorConfiguration/now``).
    public var receivedAt: Int64
    /// The `Retry-After` answered, in seconds.
    public var retryAfter: Int?
    /// Why a VAPID token was refused (never the token itself); nil otherwise.
    public var vapidRefusal: String?
    /// `HTTP/2` or `HTTP/1.1`.
    public var httpVersion: String

    /// Creates a record.
    public init(
        subscriptionID: String?, status: Int, reason: String? = nil, receivedAt: Int64, retryAfter: Int? = nil,
        vapidRefusal: String? = nil, httpVersion: String
    ) {
        self.subscriptionID = subscriptionID
        self.status = status
        self.reason = reason
        self.receivedAt = receivedAt
        self.retryAfter = retryAfter
        self.vapidRefusal = vapidRefusal
        self.httpVersion = httpVersion
    }
}
