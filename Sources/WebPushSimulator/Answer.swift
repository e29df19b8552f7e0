import Foundation

/// The response to one request, and what the request record keeps of it.
///
/// Refusals carry a JSON body `{"reason": "…", "errno": n}`: Apple's `reason` names where Apple has one
/// (`BadJwtToken`, `BadWebPushTopic`, `VapidPkHashMismatch`, `PayloadTooLarge`, `TooManyRequests`, …) and autopush's
/// `errno` where one fits (109 authentication, 111 missing header, 112 TTL, 113 topic, 104 size, 102 and 103
/// unknown and gone subscriptions, 201 back off). The reasons Apple has no name for are the simulator's own
/// (`MissingAuthorization`, `MissingTTL`, `BadTTL`, `BadContentEncoding`, `UnknownSubscription`).
struct Answer: Sendable {
    var status: Int
    /// Response headers besides `content-length`.
    var headers: [(name: String, value: String)]
    var body: String
    /// The `reason` answered, for the request record and the counts.
    var reason: String?
    /// The `Retry-After` seconds sent, if any.
    var retryAfter: Int?

    init(
        status: Int, headers: [(name: String, value: String)] = [], body: String = "", reason: String? = nil,
        retryAfter: Int? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// A refusal with `{"reason": reason, "errno": errno}`.
    static func refusal(_ status: Int, _ reason: String, errno: Int) -> Answer {
        Answer(
            status: status, headers: [("content-type", "application/json")],
            body: #"{"reason":"\#(reason)","errno":\#(errno)}"#, reason: reason)
    }

    /// 201 Created: `Location` names the message, `TTL` what the service keeps.
    static func created(location: String, ttl: Int) -> Answer {
        Answer(status: 201, headers: [("location", location), ("ttl", String(ttl))])
    }

    static let missingAuthorization = refusal(401, "MissingAuthorization", errno: 109)
    static let badJwtToken = refusal(403, "BadJwtToken", errno: 109)
    static let badVapidPublicKey = refusal(403, "BadVapidPublicKey", errno: 109)
    static let vapidPkHashMismatch = refusal(400, "VapidPkHashMismatch", errno: 109)
    static let missingTTL = refusal(400, "MissingTTL", errno: 111)
    static let badTTL = refusal(400, "BadTTL", errno: 112)
    static let badUrgency = refusal(400, "BadUrgency", errno: 111)
    static let badTopic = refusal(400, "BadWebPushTopic", errno: 113)
    static let badContentEncoding = refusal(400, "BadContentEncoding", errno: 111)
    static let payloadTooLarge = refusal(413, "PayloadTooLarge", errno: 104)
    static let unknownSubscription = refusal(404, "UnknownSubscription", errno: 102)
    static let unsubscribed = refusal(410, "Unregistered", errno: 103)
    static let methodNotAllowed = Answer(status: 405, headers: [("allow", "POST")], reason: "MethodNotAllowed")

    /// The answer an injected failure gives for `status`.
    static func injected(status: Int) -> Answer {
        switch status {
        case 404: unknownSubscription
        case 410: unsubscribed
        case 413: payloadTooLarge
        case 429: refusal(429, "TooManyRequests", errno: 201)
        case 500: refusal(500, "InternalServerError", errno: 999)
        case 502: refusal(502, "BadGateway", errno: 999)
        case 503: refusal(503, "ServiceUnavailable", errno: 201)
        default: refusal(status, "InjectedFailure", errno: 999)
        }
    }
}
