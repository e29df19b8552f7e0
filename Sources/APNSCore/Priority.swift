/// The `apns-priority` of a notification: 10 (immediate), 5 (power-aware) or 1 (lowest).
public struct Priority: Sendable, Hashable, CustomStringConvertible {
    /// The header value.
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Deliver immediately.
    public static let immediate = Priority(rawValue: 10)
    /// Deliver with the device's power considerations in mind; required for `background`.
    public static let conservePower = Priority(rawValue: 5)
    /// Prioritise the device's power over everything else.
    public static let low = Priority(rawValue: 1)

    /// Whether APNs accepts this value at all.
    public var isValid: Bool { rawValue == 10 || rawValue == 5 || rawValue == 1 }

    public var description: String { String(rawValue) }
}
