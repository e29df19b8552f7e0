/// FCM's rules for a Message's content once its JSON shape is right: reserved data keys, Android priority, TTL and
/// colour, analytics labels and the payload size.
enum PayloadValidation {
    /// The most bytes of data keys and values plus notification texts; topic and condition messages get half.
    static let maximumPayloadSize = 4096
    static let maximumTopicPayloadSize = 2048
    /// The longest TTL FCM keeps a message: 28 days.
    static let maximumTTLSeconds = 2_419_200

    /// Checks `message` (already shape-checked) for `target`.
    static func check(_ message: [JSONValue.Member], target: FCMSimulatorTarget) throws(GoogleError) {
        let object = JSONValue.object(message)
        let android = field("android", of: object)
        try checkDataKeys(field("data", of: object), path: "message.data")
        try checkDataKeys(android.flatMap { field("data", of: $0) }, path: "message.android.data")
        try checkLabel(field("fcm_options", of: object).flatMap { field("analytics_label", of: $0) }, path: "message")
        if let android { try checkAndroid(android) }

        var size = 0
        for data in [field("data", of: object), android.flatMap { field("data", of: $0) }] {
            for member in data?.members ?? [] {
                size += member.key.utf8.count + (member.value.stringValue?.utf8.count ?? 0)
            }
        }
        for notification in [field("notification", of: object), android.flatMap { field("notification", of: $0) }] {
            for member in notification?.members ?? [] { size += member.value.stringValue?.utf8.count ?? 0 }
        }
        let limit: Int
        switch target {
        case .topic, .condition: limit = maximumTopicPayloadSize
        case .token, .fid: limit = maximumPayloadSize
        }
        guard size <= limit else { throw .invalidArgument("Message too big", field: "message") }
    }

    /// The value of a field given in snake_case or lowerCamelCase; nil when absent or null.
    static func field(_ name: String, of object: JSONValue) -> JSONValue? {
        guard let member = object.members?.last(where: { SchemaCheck.snakeCase($0.key) == name }) else { return nil }
        if case .null = member.value { return nil }
        return member.value
    }

    private static func checkDataKeys(_ data: JSONValue?, path: String) throws(GoogleError) {
        for member in data?.members ?? [] {
            let key = member.key.lowercased()
            if key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm") {
                throw .invalidArgument("Invalid data payload key: \(SchemaCheck.bounded(member.key))", field: path)
            }
        }
    }

    private static func checkLabel(_ label: JSONValue?, path: String) throws(GoogleError) {
        guard let label = label?.stringValue else { return }
        guard (1...50).contains(label.utf8.count), TargetValidation.isTopicName(label) else {
            throw .invalidArgument(
                "Analytics label must match [a-zA-Z0-9-_.~%]{1,50}", field: "\(path).fcm_options.analytics_label")
        }
    }

    private static func checkAndroid(_ android: JSONValue) throws(GoogleError) {
        if let priority = field("priority", of: android)?.stringValue,
            !["normal", "high"].contains(priority.lowercased())
        {
            throw .invalidJSON(
                "Invalid value at 'message.android.priority' "
                    + "(type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), "
                    + "\"\(SchemaCheck.bounded(priority))\"",
                field: "message.android.priority")
        }
        if let ttl = field("ttl", of: android)?.stringValue {
            guard let seconds = durationSeconds(ttl) else {
                throw .invalidJSON(
                    "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "
                        + "Illegal duration format; duration must end with 's'",
                    field: "message.android.ttl")
            }
            guard seconds <= Double(maximumTTLSeconds) else {
                throw .invalidArgument(
                    "TTL must be between 0 and \(maximumTTLSeconds) seconds", field: "message.android.ttl")
            }
        }
        try checkLabel(
            field("fcm_options", of: android).flatMap { field("analytics_label", of: $0) }, path: "message.android")
        if let color = field("notification", of: android).flatMap({ field("color", of: $0) })?.stringValue {
            let digits = color.utf8.dropFirst()
            guard color.hasPrefix("#"), digits.count == 6, digits.allSatisfy({ isHexDigit($0) }) else {
                throw .invalidArgument(
                    "Color must be in the form #RRGGBB", field: "message.android.notification.color")
            }
        }
    }

    /// `"3.5s"` → 3.5; nil unless digits, an optional fraction of 1 to 9 digits, then `s`.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.utf8.count <= 32, text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].utf8.allSatisfy(isDigit),
            parts.count == 1 || ((1...9).contains(parts[1].utf8.count) && parts[1].utf8.allSatisfy(isDigit))
        else { return nil }
        return Double(number)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
