import APNSCore

/// A request as a pooled HTTP/2 connection sends it: the wire form of one provider's request. The connection, its
/// streams and its HPACK encoder are shared by every provider; what differs is the path, the headers after the
/// pseudo-headers and the credential's scheme, written by ``RequestHeaderEncoder``.
public enum WireRequest: Sendable {
    /// `POST /3/device/<token>` with the `apns-*` headers.
    case apns(APNSRequest)
    /// `POST /v1/projects/<project>/messages:send` with a JSON body.
    case fcm(FCMWireRequest)

    /// The request body.
    var payload: [UInt8] {
        switch self {
        case .apns(let request): request.payload
        case .fcm(let request): request.body
        }
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
