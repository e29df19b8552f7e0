/// One broadcast the simulator accepted (`POST /4/broadcasts/apps/<bundle>` answered 200).
public struct APNSSimulatorBroadcastRecord: Sendable, Hashable, Codable {
    /// The bundle id from `:path`.
    public var bundleID: String
    /// `apns-channel-id` as sent.
    public var channelID: String
    /// `apns-push-type` as sent (always `liveactivity` once accepted).
    public var pushType: String
    /// `apns-topic` as sent, if any.
    public var topic: String?
    /// `apns-priority`, or 10 (APNs' default) if absent.
    public var priority: Int
    /// `apns-expiration` in UNIX seconds, if sent.
    public var expiration: Int64?
    /// The `apns-request-id` answered: the request's or the generated one.
    public var requestID: String
    /// The JSON payload as text.
    public var payload: String
    /// When the simulator accepted it, in milliseconds since 1970.
    public var receivedAt: Int64

    public init(
        bundleID: String,
        channelID: String,
        pushType: String,
        topic: String?,
        priority: Int,
        expiration: Int64?,
        requestID: String,
        payload: String,
        receivedAt: Int64
    ) {
        self.bundleID = bundleID
        self.channelID = channelID
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.payload = payload
        self.receivedAt = receivedAt
    }
}
