/// The basic-class properties of a message.
public struct AMQPProperties: Sendable, Hashable {
    /// MIME content type, for example `application/json`.
    public var contentType: String?
    /// MIME content encoding, for example `gzip`.
    public var contentEncoding: String?
    /// Application message identifier.
    public var messageID: String?
    /// Correlates a reply with its request.
    public var correlationID: String?
    /// Delivery mode 2 (persisted by durable queues) when true, 1 when false.
    public var persistent: Bool
    /// Application headers.
    public var headers: AMQPTable
    /// Per-message TTL in milliseconds, as AMQP carries it: a decimal string.
    public var expiration: String?
    /// Seconds since the Unix epoch.
    public var timestamp: Int64?
    /// Message priority, 0…9 for priority queues.
    public var priority: UInt8?
    /// Application message type name.
    public var type: String?
    /// Creating application identifier.
    public var appID: String?
    /// Address to reply to.
    public var replyTo: String?

    /// Creates properties; every field is optional except `persistent`, which defaults to true.
    public init(
        contentType: String? = nil,
        contentEncoding: String? = nil,
        messageID: String? = nil,
        correlationID: String? = nil,
        persistent: Bool = true,
        headers: AMQPTable = [:],
        expiration: String? = nil,
        timestamp: Int64? = nil,
        priority: UInt8? = nil,
        type: String? = nil,
        appID: String? = nil,
        replyTo: String? = nil
    ) {
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.messageID = messageID
        self.correlationID = correlationID
        self.persistent = persistent
        self.headers = headers
        self.expiration = expiration
        self.timestamp = timestamp
        self.priority = priority
        self.type = type
        self.appID = appID
        self.replyTo = replyTo
    }
}
