import NIOHTTP1

/// One complete request as the handlers gathered it, over HTTP/1.1 or HTTP/2.
struct ReceivedRequest: Sendable {
    var method: HTTPMethod
    /// `:path` or the request target, query included.
    var path: String
    /// The headers; over HTTP/2, `:authority` arrives as `host` (NIO's HTTP/2-to-HTTP/1 codec).
    var headers: HTTPHeaders
    /// The body's first bytes, at most ``WebPushSimulatorConfiguration/maximumBodySize`` + 1 of them: enough to
    /// decide 413.
    var body: [UInt8]
    /// How many body bytes arrived in all.
    var bodySize: Int
    /// `HTTP/2` or `HTTP/1.1`.
    var httpVersion: String

    /// The path without its query.
    var route: Substring { path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }
}
