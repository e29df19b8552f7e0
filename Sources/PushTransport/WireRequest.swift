import APNSCore

/// A request as a pooled HTTP/2 connection sends it: the wire form of one provider's request. The connection, its
/// streams and its HPACK encoder are shared by every provider; what differs is the path, the headers after the
/// pseudo-headers and the credential's scheme, written by ``RequestHeaderEncoder``.
public enum WireRequest: Sendable {
    /// `POST /3/device/<token>` with the `apns-*` headers.
    case apns(APNSRequest)
    /// `POST /v1/projects/<project>/messages:send` with a JSON body.
    case fcm(FCMWireRequest)
    /// `POST <endpoint path>` with an `aes128gcm` body and the RFC 8030 headers.
    case webpush(WebPushWireRequest)

    /// The request body.
    var payload: [UInt8] {
        switch self {
        case .apns(let request): request.payload
        case .fcm(let request): request.body
        case .webpush(let request): request.body
        }
    }
}

/// One Web Push message as it goes on the wire (RFC 8030 §5): the subscription's endpoint path, the encrypted body
/// (RFC 8291 `aes128gcm`) and the headers that say how long the push service may keep it (`TTL`), how urgently to
/// deliver it (`Urgency`) and which pending message it replaces (`Topic`). The VAPID `authorization` is the
/// client's credential, the same for every request to the origin.
public struct WebPushWireRequest: Sendable {
    /// The endpoint's path and query: the `:path`.
    public var path: String
    /// Seconds the push service may hold the message for an offline browser (RFC 8030 §5.2; always sent).
    public var ttl: Int
    /// `very-low`, `low`, `normal` or `high` (RFC 8030 §5.3).
    public var urgency: String
    /// At most 32 base64url characters (RFC 8030 §5.4), if the message replaces a pending one.
    public var topic: String?
    /// The encrypted body.
    public var body: [UInt8]

    public init(path: String, ttl: Int, urgency: String, topic: String?, body: [UInt8]) {
        self.path = path
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.body = body
    }
}

/// One FCM HTTP v1 send as it goes on the wire: the project's send path and the JSON body (`{"message": …}`).
public struct FCMWireRequest: Sendable {
    /// `/v1/projects/<project>/messages:send`, the same for every request of a client.
    public var path: String
    /// The request body.
    public var body: [UInt8]

    public init(path: String, body: [UInt8]) {
        self.path = path
        self.body = body
    }
}

/// What a server answered on one stream: the status, the few headers a provider's answer is read from, and the body
/// (capped: answers worth reading are small).
public struct WireResponse: Sendable {
    /// The `:status`.
    public var status: Int
    /// `apns-id` (APNs).
    public var apnsID: String?
    /// `apns-unique-id` (APNs' development environment).
    public var apnsUniqueID: String?
    /// `retry-after`, as the server wrote it (at most 64 bytes).
    public var retryAfter: String?
    /// The body, at most ``HTTP2Stream/maximumResponseBody`` bytes.
    public var body: [UInt8]
}
