/// The request body of a message with no overrides, written straight into bytes: the same bytes, in the same order
/// (keys sorted), as the general path that builds a JSON tree first, without its dictionaries. A worker builds one
/// message per single-device job, and the tree (its hashing and sorting) was most of that job's extra cost.
extension FCMMessage {
    /// The template, written directly: only for a message without overrides whose values need no validation. It
    /// writes the template's suffix in one buffer (no member is looked up twice, nothing is copied afterwards).
    func directTemplate(validateOnly: Bool) -> FCMMessageTemplate {
        FCMMessageParts(self).write(android: android, validateOnly: validateOnly)
    }

    /// Whether `android` has a member: the general path leaves out an empty one.
    static func hasMembers(_ android: FCMAndroidConfig) -> Bool {
        android.collapseKey != nil || android.notification != nil || android.priority != nil || android.ttl != nil
    }

    /// Appends `android`'s object, keys sorted.
    static func writeAndroid(_ android: FCMAndroidConfig, to out: inout [UInt8]) {
        var fields = DirectObject()
        fields.string("collapse_key", android.collapseKey, &out)
        if let notification = android.notification {
            fields.key("notification", &out)
            var inner = DirectObject()
            inner.string("body", notification.body, &out)
            inner.strings("body_loc_args", notification.bodyLocArgs, &out)
            inner.string("body_loc_key", notification.bodyLocKey, &out)
            inner.string("channel_id", notification.channelID, &out)
            inner.string("click_action", notification.clickAction, &out)
            inner.string("color", notification.color, &out)
            inner.string("icon", notification.icon, &out)
            inner.string("image", notification.image, &out)
            if let count = notification.notificationCount {
                inner.key("notification_count", &out)
                out.append(contentsOf: String(count).utf8)
            }
            inner.string("sound", notification.sound, &out)
            inner.string("tag", notification.tag, &out)
            inner.string("title", notification.title, &out)
            inner.strings("title_loc_args", notification.titleLocArgs, &out)
            inner.string("title_loc_key", notification.titleLocKey, &out)
            inner.close(&out)
        }
        fields.string("priority", android.priority?.rawValue, &out)
        fields.string("ttl", android.ttl.map { "\($0)s" }, &out)
        fields.close(&out)
    }
}

/// A message without overrides, written up to its `android` member. The members after it, `data` and
/// `notification`, are the same at every send of a job; `android` is not (its TTL counts down to the job's expiration,
/// its notification channel is the app's). A worker writes these parts when it reads a job that lists an Android
/// device, while the job's fields are still in its caches, and each send writes only `android` in front of them.
public struct FCMMessageParts: Sendable, Hashable {
    /// `"data":{…}` and `"notification":{…}`, each after a comma, as present; then the message's closing brace.
    let rest: [UInt8]
    /// The bytes of `data` and `notification` counted against `FCMMessage.maximumPayloadSize`.
    public let payloadSize: Int

    /// The parts of `message` after `android`. Its overrides are not carried: a message with overrides goes through
    /// `FCMMessage.template(validateOnly:checked:)`, which merges them.
    public init(_ message: FCMMessage) {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        var dataSize = 0
        if !message.data.values.isEmpty {
            out.append(contentsOf: #","data":{"#.utf8)
            let entries = message.data.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, entry) in entries.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(entry.key, to: &out)
                out.append(UInt8(ascii: ":"))
                JSON.writeString(entry.value, to: &out)
                dataSize += entry.key.utf8.count + entry.value.utf8.count
            }
            out.append(UInt8(ascii: "}"))
        }
        var shown = 0
        if let notification = message.notification,
            notification.title != nil || notification.body != nil || notification.image != nil
        {
            out.append(contentsOf: #","notification":"#.utf8)
            var fields = DirectObject()
            fields.string("body", notification.body, &out)
            fields.string("image", notification.image, &out)
            fields.string("title", notification.title, &out)
            fields.close(&out)
            if let body = notification.body { shown += 4 + body.utf8.count }
            if let image = notification.image { shown += 5 + image.utf8.count }
            if let title = notification.title { shown += 5 + title.utf8.count }
        }
        out.append(UInt8(ascii: "}"))
        self.rest = out
        self.payloadSize = dataSize + shown
    }

    /// The template of the message with `android` in front of the parts, its payload size checked. `android` is
    /// not validated: it is for a builder whose values are in range by construction, as
    /// `FCMMessage.template(validateOnly:checked:)` with `checked` false is.
    public func template(android: FCMAndroidConfig?, validateOnly: Bool = false) throws(FCMMessageError)
        -> FCMMessageTemplate
    {
        try FCMMessage.checkPayloadSize(payloadSize)
        return write(android: android, validateOnly: validateOnly)
    }

    /// The template's suffix in one buffer: `,"android":{…}` if it has a member, the parts, `validate_only`.
    func write(android: FCMAndroidConfig?, validateOnly: Bool) -> FCMMessageTemplate {
        var out: [UInt8] = []
        out.reserveCapacity(rest.count + 160)
        if let android, FCMMessage.hasMembers(android) {
            out.append(contentsOf: #","android":"#.utf8)
            FCMMessage.writeAndroid(android, to: &out)
        }
        out.append(contentsOf: rest)
        if validateOnly { out.append(contentsOf: #","validate_only":true"#.utf8) }
        out.append(UInt8(ascii: "}"))
        return FCMMessageTemplate(suffix: out, validateOnly: validateOnly, payloadSize: payloadSize)
    }
}

/// One JSON object being written: its opening brace with the first member, commas between members.
private struct DirectObject {
    private var opened = false

    mutating func key(_ name: StaticString, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: opened ? "," : "{"))
        opened = true
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: #"":"#.utf8)
    }

    mutating func string(_ name: StaticString, _ value: String?, _ out: inout [UInt8]) {
        guard let value else { return }
        key(name, &out)
        JSON.writeString(value, to: &out)
    }

    mutating func strings(_ name: StaticString, _ values: [String]?, _ out: inout [UInt8]) {
        guard let values else { return }
        key(name, &out)
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSON.writeString(value, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// `}`, or `{}` for an object that got no member.
    func close(_ out: inout [UInt8]) {
        if !opened { out.append(UInt8(ascii: "{")) }
        out.append(UInt8(ascii: "}"))
    }
}
