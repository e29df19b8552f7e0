import APNSCore

/// Writing a job as JSON: what a producer publishes and what the jobs table keeps.
///
/// The document is the one `JSONEncoder` writes for the same job (read back by `Job(json:)`, the same job), compact,
/// with every object's keys sorted and absent fields left out. Foundation's encoder cost a producer 10 to 15 µs of
/// CPU a job, as much as everything else the producer does for it.
extension Job {
    /// The job as compact JSON, keys sorted. Throws only for a number that JSON cannot hold (NaN or infinite) in a
    /// passed-through value.
    public func jsonBytes() throws(PayloadValue.JSONError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(384)
        var job = JSONObjectWriter()
        job.string("app", app, &out)
        job.string("id", id, &out)
        job.key("notification", &out)
        try notification.appendJSON(to: &out)
        job.string("send_at", sendAt, &out)
        try job.value("target", target.jsonValue, &out)
        job.integer("throttle_per_second", throttlePerSecond.map(Int64.init), &out)
        job.close(&out)
        return out
    }
}

extension JobNotification {
    /// Appends the notification's object, keys sorted as `CodingKeys` spells them.
    func appendJSON(to out: inout [UInt8]) throws(PayloadValue.JSONError) {
        var fields = JSONObjectWriter()
        try fields.value("aps", .object(aps), &out)
        fields.integer("badge_increment", badgeIncrement.map(Int64.init), &out)
        fields.string("collapse_id", collapseID, &out)
        try fields.value("custom", custom.map(PayloadValue.object), &out)
        fields.integer("expiration", expiration, &out)
        try fields.value("fcm", fcm.map(PayloadValue.object), &out)
        try fields.value("localizations", localizations.map(PayloadValue.object), &out)
        fields.integer("priority", priority.map(Int64.init), &out)
        fields.string("push_type", pushType, &out)
        try fields.value("webpush", webpush.map(PayloadValue.object), &out)
        fields.close(&out)
    }
}

extension Target {
    /// The target's object as `encode(to:)` writes it (a narrowed target's members beside its base's).
    var jsonValue: PayloadValue {
        var members: [String: PayloadValue] = [:]
        add(to: &members)
        return .object(members)
    }

    private func add(to members: inout [String: PayloadValue]) {
        switch self {
        case .tokens(let tokens): members["tokens"] = .array(tokens.map(PayloadValue.string))
        case .users(let users): members["users"] = .array(users.map(PayloadValue.string))
        case .topic(let topic): members["topic"] = .string(topic)
        case .all: members["all"] = .bool(true)
        case .activity(let id): members["activity"] = .string(id)
        case .channel(let id): members["channel"] = .string(id)
        case .activityTokens(let tokens): members["activity_tokens"] = .array(tokens.map(PayloadValue.string))
        case .filtered(let base, let locales):
            base.add(to: &members)
            members["locales"] = .array(locales.map(PayloadValue.string))
        case .platforms(let base, let platforms):
            base.add(to: &members)
            members["platforms"] = .array(platforms.map { .string($0.rawValue) })
        }
    }
}

/// One JSON object being written: its opening brace with the first member, commas between members.
private struct JSONObjectWriter {
    private var opened = false

    mutating func key(_ name: StaticString, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: opened ? "," : "{"))
        opened = true
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: #"":"#.utf8)
    }

    /// A member with a JSON value, if there is one. Throws only for a number JSON cannot hold.
    mutating func value(_ name: StaticString, _ value: PayloadValue?, _ out: inout [UInt8]) throws(PayloadValue
        .JSONError)
    {
        guard let value else { return }
        key(name, &out)
        try value.appendJSON(to: &out)
    }

    /// A member with a string value, if there is one.
    mutating func string(_ name: StaticString, _ value: String?, _ out: inout [UInt8]) {
        guard let value else { return }
        key(name, &out)
        try? PayloadValue.string(value).appendJSON(to: &out)  // a string holds no number: it cannot fail
    }

    /// A member with an integer value, if there is one.
    mutating func integer(_ name: StaticString, _ value: Int64?, _ out: inout [UInt8]) {
        guard let value else { return }
        key(name, &out)
        out.append(contentsOf: String(value).utf8)
    }

    /// `}`, or `{}` for an object that got no member.
    func close(_ out: inout [UInt8]) {
        if !opened { out.append(UInt8(ascii: "{")) }
        out.append(UInt8(ascii: "}"))
    }
}
