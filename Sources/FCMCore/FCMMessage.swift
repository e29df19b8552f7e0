/// The Message resource Herald sends for one job: everything but the target, which differs per device.
///
/// `template(validateOnly:)` validates it once per job and encodes it once; the template's `body(for:)` then
/// splices each device's target into the precomputed bytes.
public struct FCMMessage: Sendable, Hashable {
    /// The most bytes of payload data (the keys and values of `data` and `notification`) FCM accepts.
    public static let maximumPayloadSize = 4096

    /// `message.notification`.
    public var notification: FCMNotification?
    /// `message.data`: the custom data, as strings.
    public var data: FCMData
    /// `message.android`.
    public var android: FCMAndroidConfig?
    /// The job's `fcm` block, merged over the fields above (its values win).
    public var overrides: FCMMessageOverrides?

    /// Creates the message; nothing is checked until `template(validateOnly:)`.
    public init(
        notification: FCMNotification? = nil,
        data: FCMData = [:],
        android: FCMAndroidConfig? = nil,
        overrides: FCMMessageOverrides? = nil
    ) {
        self.notification = notification
        self.data = data
        self.android = android
        self.overrides = overrides
    }

    /// Validates the message, merges the overrides, checks the payload size and encodes the request body around
    /// a hole for the target. With `validateOnly`, FCM checks everything and delivers nothing.
    ///
    /// - Parameter checked: false skips validating the fields set here (not the overrides, which are validated when
    ///   they are read): for a builder whose values are in range by construction (Herald's, which clamps the TTL and
    ///   sets only strings, a priority and a count), once per job of a single device, where validating cost as much
    ///   as the rest of the send.
    public func template(validateOnly: Bool = false, checked: Bool = true) throws(FCMMessageError)
        -> FCMMessageTemplate
    {
        if !checked && overrides == nil {
            return try FCMMessageParts(self).template(
                ttl: android?.ttl, channelID: android?.notification?.channelID, validateOnly: validateOnly)
        }
        var built: [String: JSON] = [:]
        if let notification, case .object(let members) = notification.json, !members.isEmpty {
            built["notification"] = notification.json
        }
        if !data.values.isEmpty { built["data"] = data.json }
        if let android, case .object(let members) = android.json, !members.isEmpty { built["android"] = android.json }
        guard
            case .object(var message) = checked ? try Shape.message.validate(.object(built), path: "") : .object(built)
        else { preconditionFailure("an object validates to an object") }
        if let overrides { message = Self.merge(overrides.json, over: message) }
        let size = Self.payloadSize(of: message)
        try Self.checkPayloadSize(size)
        return FCMMessageTemplate(members: message, validateOnly: validateOnly, payloadSize: size)
    }

    /// Refuses a payload (`data` and `notification`) larger than FCM accepts.
    static func checkPayloadSize(_ size: Int) throws(FCMMessageError) {
        guard size <= maximumPayloadSize else {
            throw FCMMessageError(
                .tooLarge, field: "data",
                "data and notification are \(size) bytes; FCM accepts at most \(maximumPayloadSize)")
        }
    }

    /// Merges `top` over `base`: objects member by member (recursively), anything else replaced.
    static func merge(_ top: [String: JSON], over base: [String: JSON]) -> [String: JSON] {
        var out = base
        for (key, value) in top {
            if case .object(let upper) = value, case .object(let lower)? = base[key] {
                out[key] = .object(merge(upper, over: lower))
            } else {
                out[key] = value
            }
        }
        return out
    }

    /// The payload size FCM limits: the UTF-8 bytes of the keys and string values of `notification` and of the
    /// data an Android device gets (`android.data` replaces `data` there), whichever data is larger.
    static func payloadSize(of message: [String: JSON]) -> Int {
        func size(_ value: JSON?) -> Int {
            guard let members = value?.object else { return 0 }
            return members.reduce(0) { $0 + $1.key.utf8.count + ($1.value.string?.utf8.count ?? 0) }
        }
        let data = max(size(message["data"]), size(message["android"]?.object?["data"]))
        return data + size(message["notification"])
    }
}
