/// An answer the simulator gives instead of 200 to `messages:send`, on a deterministic schedule.
///
/// Counting is per rule and across connections: among the send requests that pass every check (and whose token or
/// FID has `tokenPrefix`, if set), the `every`-th, 2·`every`-th … are answered with `status`, at most `times` times.
/// `every: 1, times: 2` fails the first two; `every: 3` fails every third forever.
public struct FCMInjectedFailure: Sendable, Hashable, Codable {
    /// The HTTP status: 429 (QUOTA_EXCEEDED), 500 (INTERNAL) or 503 (UNAVAILABLE); any other status answers
    /// UNSPECIFIED_ERROR.
    public var status: Int
    /// Which eligible requests fail: every n-th, counting from 1.
    public var every: Int
    /// How many times the rule fires at most; nil is unlimited.
    public var times: Int?
    /// Only registration tokens or FIDs with this prefix are eligible; nil makes every request eligible.
    public var tokenPrefix: String?
    /// The `Retry-After` header in seconds; nil sends none.
    public var retryAfter: Int?

    /// Creates a rule; `every` is at least 1.
    public init(status: Int, every: Int = 1, times: Int? = nil, tokenPrefix: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.every = max(1, every)
        self.times = times
        self.tokenPrefix = tokenPrefix
        self.retryAfter = retryAfter
    }

    private enum CodingKeys: String, CodingKey {
        case status, every, times, tokenPrefix, retryAfter
    }

    /// Decodes a rule; `every` defaults to 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            status: try container.decode(Int.self, forKey: .status),
            every: try container.decodeIfPresent(Int.self, forKey: .every) ?? 1,
            times: try container.decodeIfPresent(Int.self, forKey: .times),
            tokenPrefix: try container.decodeIfPresent(String.self, forKey: .tokenPrefix),
            retryAfter: try container.decodeIfPresent(Int.self, forKey: .retryAfter)
        )
    }

    /// 429 RESOURCE_EXHAUSTED with FcmError QUOTA_EXCEEDED.
    public static func quotaExceeded(
        every: Int = 1, times: Int? = nil, tokenPrefix: String? = nil, retryAfter: Int? = nil
    ) -> Self {
        Self(status: 429, every: every, times: times, tokenPrefix: tokenPrefix, retryAfter: retryAfter)
    }

    /// 500 INTERNAL with FcmError INTERNAL.
    public static func internalError(
        every: Int = 1, times: Int? = nil, tokenPrefix: String? = nil, retryAfter: Int? = nil
    ) -> Self {
        Self(status: 500, every: every, times: times, tokenPrefix: tokenPrefix, retryAfter: retryAfter)
    }

    /// 503 UNAVAILABLE with FcmError UNAVAILABLE.
    public static func unavailable(
        every: Int = 1, times: Int? = nil, tokenPrefix: String? = nil, retryAfter: Int? = nil
    ) -> Self {
        Self(status: 503, every: every, times: times, tokenPrefix: tokenPrefix, retryAfter: retryAfter)
    }
}
