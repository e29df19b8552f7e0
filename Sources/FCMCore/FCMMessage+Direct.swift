/// A message without overrides, written straight into bytes (the same bytes, keys sorted, as the general path that
/// builds a JSON tree first, without its dictionaries), once, with two holes: `android.ttl` and
/// `android.notification.channel_id`, the two fields that differ between sends of one job (its TTL counts down to the
/// job's expiration, the channel is the app's, which a reload may change). The worker writes the parts at intake for
/// a small job that lists an Android device, while the job's fields are still in its caches; the send writes each
/// device's body from them with the two fields spliced in (`body(for:ttl:channelID:)`).
/// `FCMMessage.template(checked: false)` is the same writer with the message's own two fields.
public struct FCMMessageParts: Sendable, Hashable {
    /// The `android` object without `ttl` and `channel_id` (`{}` if it has no other member), then `,"data":{…}` and
    /// `,"notification":{…}` as present, then the message's closing brace: one buffer, one allocation.
    let bytes: [UInt8]
    /// Where the `android` object ends in `bytes` (0: there is none).
    let androidEnd: Int
    /// Where in `bytes` the `channel_id` member goes (nil: there is no notification to carry it), and the `ttl`.
    let channelAt: Int?
    let ttlAt: Int
    /// The bytes of `data` and `notification` counted against `FCMMessage.maximumPayloadSize`.
    public let payloadSize: Int

    /// The parts of `message`, its `android.ttl` and notification channel left out. Its overrides are not carried: a
    /// message with overrides goes through `FCMMessage.template(validateOnly:checked:)`, which merges them.
    public init(_ message: FCMMessage) {
        var data: [(key: String, value: String)] = []
        data.reserveCapacity(message.data.values.count)
        for (key, value) in message.data.values { data.append((key, value)) }
        self.init(
            android: message.android.map { ($0.collapseKey, $0.priority, $0.notification) },
            notification: message.notification, data: &data)
    }

    /// The parts of the message `FCMMessage(notification: notification, data: data, android:
    /// FCMAndroidConfig(collapseKey: collapseKey, priority: priority, notification: androidNotification))`, written
    /// without building it: no dictionary of the data and no message value on the way (a job's neutral parts, which
    /// the worker writes at intake for every small job that lists an Android device).
    ///
    /// - Parameter data: the entries of `message.data`, keys distinct, in any order (sorted here).
    public init(
        collapseKey: String?, priority: FCMAndroidConfig.Priority?, androidNotification: FCMAndroidNotification?,
        notification: FCMNotification?, data: inout [(key: String, value: String)]
    ) {
        self.init(android: (collapseKey, priority, androidNotification), notification: notification, data: &data)
    }

    private init(
        android: (collapseKey: String?, priority: FCMAndroidConfig.Priority?, notification: FCMAndroidNotification?)?,
        notification: FCMNotification?, data: inout [(key: String, value: String)]
    ) {
        var out: [UInt8] = []
        out.reserveCapacity(384)
        var channelAt: Int? = nil
        var ttlAt = 0  // not read without an android object: there is nowhere to splice a TTL
        if let android {
            var fields = DirectObject()
            fields.string("collapse_key", android.collapseKey, &out)
            if let notification = android.notification {
                fields.key("notification", &out)
                var inner = DirectObject()
                inner.string("body", notification.body, &out)
                inner.strings("body_loc_args", notification.bodyLocArgs, &out)
                inner.string("body_loc_key", notification.bodyLocKey, &out)
                // "channel_id" sorts here; `write` splices it in.
                inner.mark(&out)
                channelAt = out.count
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
            // "ttl" sorts last; `write` splices it in.
            fields.mark(&out)
            ttlAt = out.count
            fields.close(&out)
        }
        self.androidEnd = out.count
        self.channelAt = channelAt
        self.ttlAt = ttlAt
        var dataSize = 0
        if !data.isEmpty {
            out.append(contentsOf: #","data":{"#.utf8)
            data.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, entry) in data.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(entry.key, to: &out)
                out.append(UInt8(ascii: ":"))
                JSON.writeString(entry.value, to: &out)
                dataSize += entry.key.utf8.count + entry.value.utf8.count
            }
            out.append(UInt8(ascii: "}"))
        }
        var shown = 0
        if let notification, notification.title != nil || notification.body != nil || notification.image != nil {
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
        self.bytes = out
        self.payloadSize = dataSize + shown
    }

    /// The template with `android.ttl` (seconds) and the notification's `channel_id` spliced in, its payload size
    /// checked. Nothing else is validated: the parts are for a builder whose values are in range by construction, as
    /// `FCMMessage.template(validateOnly:checked:)` with `checked` false is. Without an `android` object in the
    /// parts, neither is sent; without a notification, no channel is.
    public func template(ttl: Int64?, channelID: String?, validateOnly: Bool = false) throws(FCMMessageError)
        -> FCMMessageTemplate
    {
        try FCMMessage.checkPayloadSize(payloadSize)
        return write(ttl: ttl, channelID: channelID, validateOnly: validateOnly)
    }

    /// The request body for `target` with `android.ttl` and the notification's `channel_id` spliced in: what
    /// `template(ttl:channelID:)` then the template's `body(for:)` give, written into one buffer, with no template
    /// in between. The payload size is not checked here: check it once per share with `checkPayloadSize()`.
    public func body(for target: FCMTarget, ttl: Int64?, channelID: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(FCMMessageTemplate.prefix.count + target.value.utf8.count + bytes.count + 112)
        FCMMessageTemplate.writeTarget(target, to: &out)
        writeSuffix(ttl: ttl, channelID: channelID, validateOnly: false, to: &out)
        return out
    }

    /// Refuses parts whose payload is larger than FCM accepts, as `template(ttl:channelID:)` does.
    public func checkPayloadSize() throws(FCMMessageError) {
        try FCMMessage.checkPayloadSize(payloadSize)
    }

    /// The template's suffix in one buffer: `,"android":{…}` if it has a member, the rest, `validate_only`.
    func write(ttl: Int64?, channelID: String?, validateOnly: Bool) -> FCMMessageTemplate {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 96)
        writeSuffix(ttl: ttl, channelID: channelID, validateOnly: validateOnly, to: &out)
        return FCMMessageTemplate(suffix: out, validateOnly: validateOnly, payloadSize: payloadSize)
    }

    /// Appends what follows the target: `,"android":{…}` if it has a member, the rest, `validate_only`, `}`.
    private func writeSuffix(ttl: Int64?, channelID: String?, validateOnly: Bool, to out: inout [UInt8]) {
        // An object with no member (`{}`, so no notification either) and no TTL is left out, as the general path
        // leaves it.
        var from = androidEnd
        if androidEnd > 2 || (androidEnd > 0 && ttl != nil) {
            out.append(contentsOf: #","android":"#.utf8)
            from = 0
            if let channelAt, let channelID {
                out.append(contentsOf: bytes[from..<channelAt])
                Self.splice(bytes, at: channelAt, &out) { out in
                    out.append(contentsOf: #""channel_id":"#.utf8)
                    JSON.writeString(channelID, to: &out)
                }
                from = channelAt
            }
            if let ttl {
                out.append(contentsOf: bytes[from..<ttlAt])
                Self.splice(bytes, at: ttlAt, &out) { out in
                    out.append(contentsOf: #""ttl":""#.utf8)
                    out.append(contentsOf: String(ttl).utf8)
                    out.append(contentsOf: #"s""#.utf8)
                }
                from = ttlAt
            }
        }
        out.append(contentsOf: bytes[from...])
        if validateOnly { out.append(contentsOf: #","validate_only":true"#.utf8) }
        out.append(UInt8(ascii: "}"))
    }

    /// Writes a member at `offset` of an object's bytes with the comma it needs: after the opening brace it comes
    /// first, followed by a comma unless the object ends there; after a member it takes a comma before it (the member
    /// that follows has its own).
    private static func splice(
        _ object: [UInt8], at offset: Int, _ out: inout [UInt8], member: (inout [UInt8]) -> Void
    ) {
        if object[offset - 1] == UInt8(ascii: "{") {
            member(&out)
            if object[offset] != UInt8(ascii: "}") { out.append(UInt8(ascii: ",")) }
        } else {
            out.append(UInt8(ascii: ","))
            member(&out)
        }
    }
}

/// One JSON object being written: its opening brace with the first member, commas between members.
private struct DirectObject {
    private var braced = false
    private var hasMember = false

    mutating func key(_ name: StaticString, _ out: inout [UInt8]) {
        mark(&out)
        if hasMember { out.append(UInt8(ascii: ",")) }
        hasMember = true
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: #"":"#.utf8)
    }

    /// Writes the opening brace if no member did: a member spliced in later (`FCMMessageParts`) goes inside it.
    mutating func mark(_ out: inout [UInt8]) {
        if !braced {
            out.append(UInt8(ascii: "{"))
            braced = true
        }
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
    mutating func close(_ out: inout [UInt8]) {
        mark(&out)
        out.append(UInt8(ascii: "}"))
    }
}
