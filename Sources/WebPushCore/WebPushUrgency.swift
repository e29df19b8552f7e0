/// The `Urgency` request header (RFC 8030 section 5.3): when the browser's device should be woken for the message.
/// Lower urgency saves the device's battery.
public enum WebPushUrgency: String, Sendable, CaseIterable {
    /// Deliver only on power and Wi-Fi.
    case veryLow = "very-low"
    /// Deliver on power or Wi-Fi.
    case low
    /// Deliver in any state except low battery (the default when the header is absent).
    case normal
    /// Deliver even on low battery.
    case high

    /// The header's value.
    public var headerValue: String { rawValue }
}

/// The `TTL` request header (RFC 8030 section 5.2): seconds the push service may keep a message for an offline
/// browser. Required on every request (a push service answers 400 without it); 0 means deliver now or drop.
public enum WebPushTTL {
    /// The longest TTL sent: four weeks, FCM's ceiling (autopush keeps 30 days; every service may keep less).
    public static let maximum: Int = 2_419_200

    /// `seconds` clamped to `0...maximum`: a negative time left (an expired job) becomes 0, a longer one the maximum.
    public static func clamped(_ seconds: some BinaryInteger) -> Int {
        min(max(Int(clamping: seconds), 0), maximum)
    }
}
