/// `message.android`: delivery options for Android devices.
public struct FCMAndroidConfig: Sendable, Hashable {
    /// `android.priority`.
    public enum Priority: String, Sendable, Hashable {
        /// Delivered at once, waking the device (for what the user sees).
        case high = "HIGH"
        /// May be delayed to save battery.
        case normal = "NORMAL"
    }

    /// The longest time to live: 28 days.
    public static let maximumTTL: Int64 = 2_419_200

    /// Messages with one key replace each other while waiting; at most 4 keys per device at a time.
    public var collapseKey: String?
    /// `android.priority`; FCM's default is `NORMAL` for data messages and `HIGH` for notification messages.
    public var priority: Priority?
    /// Seconds FCM keeps the message for an offline device, 0…`maximumTTL` (0: now or never). FCM's default is 28
    /// days.
    public var ttl: Int64?
    /// `android.notification`.
    public var notification: FCMAndroidNotification?

    /// Creates the options; unset fields are left out of the message.
    public init(
        collapseKey: String? = nil,
        priority: Priority? = nil,
        ttl: Int64? = nil,
        notification: FCMAndroidNotification? = nil
    ) {
        self.collapseKey = collapseKey
        self.priority = priority
        self.ttl = ttl
        self.notification = notification
    }

    /// The JSON; an out-of-range `ttl` is written as given so that validation names `android.ttl`.
    var json: JSON {
        var members: [String: JSON] = [:]
        members["collapse_key"] = collapseKey.map(JSON.string)
        members["priority"] = priority.map { .string($0.rawValue) }
        members["ttl"] = ttl.map { .string("\($0)s") }
        members["notification"] = notification?.json
        return .object(members)
    }
}
