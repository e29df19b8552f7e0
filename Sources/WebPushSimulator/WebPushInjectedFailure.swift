/// An answer the simulator gives instead of 201, on a deterministic schedule.
///
/// Counting is per rule and across connections: among the requests that pass every header and size check (and whose
/// subscription id has `idPrefix`, if set), the `every`-th, 2·`every`-th … are answered with `status`, at most
/// `times` times. `every: 1, times: 2` fails the first two; `every: 3` fails every third forever. The statuses that
/// mean something are 404 and 410 (a dead subscription), 413, 429 and 500/502/503 (each with the body a real service
/// gives); a failure fires before decryption, and nothing is recorded as accepted.
public struct WebPushInjectedFailure: Sendable, Hashable, Codable {
    /// The HTTP status: 404, 410, 413, 429, 500, 502 or 503.
    public var status: Int
    /// Which eligible requests fail: every n-th, counting from 1.
    public var every: Int
    /// How many times the rule fires at most; nil is unlimited.
    public var times: Int?
    /// The `Retry-After` header in seconds; nil sends none.
    public var retryAfter: Int?
    /// Only subscription ids with this prefix are eligible; nil makes every request eligible.
    public var idPrefix: String?

    /// Creates a rule; `every` is at least 1.
    public init(status: Int, every: Int = 1, times: Int? = nil, retryAfter: Int? = nil, idPrefix: String? = nil) {
        self.status = status
        self.every = max(1, every)
        self.times = times
        self.retryAfter = retryAfter
        self.idPrefix = idPrefix
    }

    private enum CodingKeys: String, CodingKey {
        case status, every, times, retryAfter, idPrefix
    }

    /// Decodes a rule; `every` defaults to 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            status: try container.decode(Int.self, forKey: .status),
            every: try container.decodeIfPresent(Int.self, forKey: .every) ?? 1,
            times: try container.decodeIfPresent(Int.self, forKey: .times),
            retryAfter: try container.decodeIfPresent(Int.self, forKey: .retryAfter),
            idPrefix: try container.decodeIfPresent(String.self, forKey: .idPrefix)
        )
    }

    /// 429 `TooManyRequests`.
    public static func tooManyRequests(
        every: Int = 1, times: Int? = nil, retryAfter: Int? = nil, idPrefix: String? = nil
    ) -> Self {
        Self(status: 429, every: every, times: times, retryAfter: retryAfter, idPrefix: idPrefix)
    }

    /// 503 `ServiceUnavailable`.
    public static func serviceUnavailable(
        every: Int = 1, times: Int? = nil, retryAfter: Int? = nil, idPrefix: String? = nil
    ) -> Self {
        Self(status: 503, every: every, times: times, retryAfter: retryAfter, idPrefix: idPrefix)
    }
}
