/// The parts of FCM's Message resource that Herald builds or lets a job's `fcm` block set, as shapes to validate
/// against (from FCM.md and the discovery document). Validation returns the canonical value: `snake_case` keys
/// (proto3 JSON also takes `lowerCamelCase`; both spellings of one field are refused), upper-case enums.
indirect enum Shape: Sendable {
    case string
    /// An `http` or `https` URL.
    case url
    /// An `https` URL.
    case httpsURL
    /// `#rrggbb`.
    case color
    /// `[a-zA-Z0-9-_.~%]{1,50}` (analytics labels).
    case label
    /// A proto3 Duration string, `"<seconds>s"` with up to nine decimals, within 0…`maximumDuration` seconds.
    case duration
    case bool
    case integer(ClosedRange<Int64>)
    /// A JSON number within the range (e.g. a colour component).
    case fraction(ClosedRange<Double>)
    /// One of the values, compared case-insensitively and written as given here.
    case enumeration([String])
    case array(Shape)
    /// `map<string, string>` whose keys must not be reserved (`from`, `message_type`, `google…`, `gcm…`).
    case dataMap
    /// `map<string, string>`.
    case stringMap
    /// Any JSON object, passed through (an APNs payload, a web notification).
    case anyObject
    /// An object with these fields only; `required` fields must be present.
    case object([String: Shape], required: Set<String>)

    /// The longest Duration accepted: 28 days, FCM's maximum TTL.
    static let maximumDuration: Int64 = 2_419_200

    static let analytics = Shape.object(["analytics_label": .label], required: [])

    static let notification = Shape.object(["title": .string, "body": .string, "image": .url], required: [])

    static let androidNotification = Shape.object(
        [
            "title": .string, "body": .string, "icon": .string, "color": .color, "sound": .string, "tag": .string,
            "click_action": .string, "body_loc_key": .string, "body_loc_args": .array(.string),
            "title_loc_key": .string, "title_loc_args": .array(.string), "channel_id": .string, "ticker": .string,
            "sticky": .bool, "event_time": .string, "local_only": .bool,
            "notification_priority": .enumeration([
                "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH",
                "PRIORITY_MAX",
            ]),
            "default_sound": .bool, "default_vibrate_timings": .bool, "default_light_settings": .bool,
            "vibrate_timings": .array(.duration),
            "visibility": .enumeration(["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
            "notification_count": .integer(0...Int64(Int32.max)),
            "light_settings": .object(
                [
                    "color": .object(
                        [
                            "red": .fraction(0...1), "green": .fraction(0...1), "blue": .fraction(0...1),
                            "alpha": .fraction(0...1),
                        ],
                        required: []),
                    "light_on_duration": .duration, "light_off_duration": .duration,
                ],
                required: ["color", "light_on_duration", "light_off_duration"]),
            "image": .url,
            "proxy": .enumeration(["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
        ],
        required: [])

    static let android = Shape.object(
        [
            "collapse_key": .string, "priority": .enumeration(["NORMAL", "HIGH"]), "ttl": .duration,
            "restricted_package_name": .string, "data": .dataMap, "notification": androidNotification,
            "fcm_options": analytics, "direct_boot_ok": .bool, "bandwidth_constrained_ok": .bool,
            "restricted_satellite_ok": .bool,
        ],
        required: [])

    static let apns = Shape.object(
        [
            "headers": .stringMap, "payload": .anyObject,
            "fcm_options": .object(["analytics_label": .label, "image": .url], required: []),
            "live_activity_token": .string,
        ],
        required: [])

    static let webpush = Shape.object(
        [
            "headers": .stringMap, "data": .stringMap, "notification": .anyObject,
            "fcm_options": .object(["link": .httpsURL, "analytics_label": .label], required: []),
        ],
        required: [])

    /// The message without its target: what the job's `fcm` block may set, and what Herald builds.
    static let message = Shape.object(
        [
            "android": android, "data": .dataMap, "notification": notification, "fcm_options": analytics,
            "apns": apns, "webpush": webpush,
        ],
        required: [])

    /// The target fields, which Herald sets and a job may not.
    static let targetFields: Set<String> = ["token", "topic", "condition", "fid"]
}
