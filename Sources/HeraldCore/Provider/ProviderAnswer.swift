/// A push provider's answer to one notification, in the terms every provider shares: the HTTP status, the reason it
/// gave (APNs' `reason`, FCM's error code), how long it asked the sender to wait (`Retry-After`), and when it learnt
/// that the token was dead (APNs' 410 `timestamp`). What an answer means is its provider's `SettlementTable`'s.
public struct ProviderAnswer: Sendable, Hashable {
    /// The HTTP status, e.g. 200 or 410.
    public var status: Int
    /// The reason the provider gave; nil on success or when it gave none.
    public var reason: ProviderReason?
    /// `Retry-After`: the least wait before sending again, if the provider asked for one.
    public var retryAfter: Duration?
    /// When the provider learnt the token was no longer valid, in milliseconds since 1970.
    public var invalidSince: Int64?

    public init(status: Int, reason: ProviderReason? = nil, retryAfter: Duration? = nil, invalidSince: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
        self.invalidSince = invalidSince
    }

    /// A 2xx answer: the provider took the notification.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// A reason a provider gave, as it spelled it (`BadDeviceToken`, `UNREGISTERED`), and whether its provider's table
/// counts it against the app rather than the device (the prune breaker's evidence: a token that the provider says
/// belongs to another app or sender is more likely a misconfigured app than a dead device). Two reasons are equal
/// when they are spelled the same.
public struct ProviderReason: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    /// Whether the answer counts against the app (its credentials or its topic) rather than the device.
    public let countsAgainstApp: Bool
    /// The provider that gave it, as a job's error names it: `APNs`, `FCM`.
    public let provider: String

    public init(rawValue: String, countsAgainstApp: Bool = false, provider: String = "APNs") {
        self.rawValue = rawValue
        self.countsAgainstApp = countsAgainstApp
        self.provider = provider
    }

    public var description: String { rawValue }

    public static func == (lhs: ProviderReason, rhs: ProviderReason) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}
