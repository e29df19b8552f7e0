/// The request body of a message with no overrides, written straight into bytes: the same bytes, in the same order
/// (keys sorted), as the general path that builds a JSON tree first, without its dictionaries. A worker builds one
/// message per single-device job, and the tree (its hashing and sorting) was most of that job's extra cost.
extension FCMMessage {
    /// The template, written directly: only for a message without overrides whose values need no validation.
    func directTemplate(validateOnly: Bool) -> FCMMessageTemplate {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        var first = true
        func key(_ name: StaticString) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: #"":"#.utf8)
        }
        if let android, let members = Self.directAndroid(android) {
            key("android")
            out.append(contentsOf: members)
        }
        if !data.values.isEmpty {
            key("data")
            out.append(UInt8(ascii: "{"))
            for (index, name) in data.values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
                .enumerated()
            {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                JSON.writeString(data.values[name]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        var shown = 0
        if let notification, notification.title != nil || notification.body != nil || notification.image != nil {
            key("notification")
            var fields = DirectObject()
            fields.string("body", notification.body, &out)
            fields.string("image", notification.image, &out)
            fields.string("title", notification.title, &out)
            fields.close(&out)
            for (name, value) in [
                ("body", notification.body), ("image", notification.image), ("title", notification.title),
            ] {
                if let value { shown += name.utf8.count + value.utf8.count }
            }
        }
        let dataSize = data.values.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        return FCMMessageTemplate(encodedMembers: out, validateOnly: validateOnly, payloadSize: dataSize + shown)
    }

    /// `android` as the general path writes it: nil when it has no member.
    static func directAndroid(_ android: FCMAndroidConfig) -> [UInt8]? {
        guard android.collapseKey != nil || android.notification != nil || android.priority != nil || android.ttl != nil
        else { return nil }
        var out: [UInt8] = []
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
        return out
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
