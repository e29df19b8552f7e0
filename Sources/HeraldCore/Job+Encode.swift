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
        job.key("app", &out)
        PayloadValue.string(app).appendPlainJSON(to: &out)
        if let id {
            job.key("id", &out)
            PayloadValue.string(id).appendPlainJSON(to: &out)
        }
        job.key("notification", &out)
        try notification.appendJSON(to: &out)
        if let sendAt {
            job.key("send_at", &out)
            PayloadValue.string(sendAt).appendPlainJSON(to: &out)
        }
        job.key("target", &out)
        try target.jsonValue.appendJSON(to: &out)
        if let throttlePerSecond {
            job.key("throttle_per_second", &out)
            out.append(contentsOf: String(throttlePerSecond).utf8)
        }
        job.close(&out)
        return out
    }
}

extension JobNotification {
    /// Appends the notification's object, keys sorted as `CodingKeys` spells them.
    func appendJSON(to out: inout [UInt8]) throws(PayloadValue.JSONError) {
        var fields = JSONObjectWriter()
        fields.key("aps", &out)
        try PayloadValue.object(aps).appendJSON(to: &out)
        if let badgeIncrement {
            fields.key("badge_increment", &out)
            out.append(contentsOf: String(badgeIncrement).utf8)
        }
        if let collapseID {
            fields.key("collapse_id", &out)
            PayloadValue.string(collapseID).appendPlainJSON(to: &out)
        }
        if let custom {
            fields.key("custom", &out)
            try PayloadValue.object(custom).appendJSON(to: &out)
        }
        if let expiration {
            fields.key("expiration", &out)
            out.append(contentsOf: String(expiration).utf8)
        }
        if let fcm {
            fields.key("fcm", &out)
            try PayloadValue.object(fcm).appendJSON(to: &out)
        }
        if let localizations {
            fields.key("localizations", &out)
            try PayloadValue.object(localizations).appendJSON(to: &out)
        }
        if let priority {
            fields.key("priority", &out)
            out.append(contentsOf: String(priority).utf8)
        }
        if let pushType {
            fields.key("push_type", &out)
            PayloadValue.string(pushType).appendPlainJSON(to: &out)
        }
        if let webpush {
            fields.key("webpush", &out)
            try PayloadValue.object(webpush).appendJSON(to: &out)
        }
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

extension PayloadValue {
    /// Appends a value that holds no number (a string), which cannot fail.
    fileprivate func appendPlainJSON(to out: inout [UInt8]) {
        try? appendJSON(to: &out)
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

    /// `}`, or `{}` for an object that got no member.
    func close(_ out: inout [UInt8]) {
        if !opened { out.append(UInt8(ascii: "{")) }
        out.append(UInt8(ascii: "}"))
    }
}
