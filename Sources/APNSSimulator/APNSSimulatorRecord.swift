/// One notification the simulator accepted (answered 200).
public struct APNSSimulatorRecord: Sendable, Hashable, Codable {
    /// The device token from `:path`, lowercase hex.
    public var token: String
    /// `apns-topic` as sent.
    public var topic: String
    /// `apns-push-type` as sent, or `alert` if absent.
    public var pushType: String
    /// `apns-priority`, or 10 (APNs' default) if absent.
    public var priority: Int
    /// `apns-expiration` in UNIX seconds, if sent.
    public var expiration: Int64?
    /// `apns-collapse-id`, if sent.
    public var collapseID: String?
    /// The `apns-id` answered: the request's or the generated one.
    public var apnsID: String
    /// The JSON payload as text.
    public var payload: String
    /// When the simulator accepted it, in milliseconds since 1970.
    public var receivedAt: Int64

    public init(
        token: String,
        topic: String,
        pushType: String,
        priority: Int,
        expiration: Int64?,
        collapseID: String?,
        apnsID: String,
        payload: String,
        receivedAt: Int64
    ) {
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
        self.receivedAt = receivedAt
    }
}
