import APNSCore

/// Reading a job from its JSON value: the one definition of the wire shape's decoding rules, used on the worker's
/// hot path (`PreparedJob.decode`, without Codable) and by `Decodable` (which reads a `PayloadValue` first).
///
/// Errors name the field by its path (`target.tokens.3 has the wrong type`), never its value. Unknown fields are
/// ignored (the contract only ever adds optional fields); a field that is null counts as absent.
struct JobFields {
    let members: [String: PayloadValue]
    /// Where this object is, e.g. "notification"; empty at the top.
    let path: String

    init(_ value: PayloadValue, path: String) throws(JobError) {
        guard case .object(let members) = value else { throw Self.wrongType(path) }
        self.members = members
        self.path = path
    }

    func at(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    static func wrongType(_ path: String) -> JobError {
        JobError(.malformed, "not a job: \(path.isEmpty ? "the message" : path) has the wrong type")
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    func value(_ key: String) throws(JobError) -> PayloadValue {
        guard let value = members[key], value != .null else {
            throw JobError(.malformed, "not a job: missing field \(at(key))")
        }
        return value
    }

    func optional(_ key: String) -> PayloadValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(JobError) -> String {
        guard case .string(let text) = try value(key) else { throw Self.wrongType(at(key)) }
        return text
    }

    func optionalString(_ key: String) throws(JobError) -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw Self.wrongType(at(key)) }
        return text
    }

    func optionalInteger(_ key: String) throws(JobError) -> Int64? {
        guard let value = optional(key) else { return nil }
        switch value {
        case .integer(let number): return number
        case .number(let number) where number == number.rounded(.towardZero) && abs(number) < 9.0e15:
            return Int64(number)
        default: throw Self.wrongType(at(key))
        }
    }

    func optionalInt(_ key: String) throws(JobError) -> Int? {
        try optionalInteger(key).map { Int($0) }
    }

    func strings(_ key: String) throws(JobError) -> [String] {
        guard case .array(let values) = try value(key) else { throw Self.wrongType(at(key)) }
        var strings: [String] = []
        strings.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            guard case .string(let text) = value else { throw Self.wrongType(at(key) + ".\(index)") }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String) throws(JobError) -> [String: PayloadValue] {
        guard case .object(let members) = try value(key) else { throw Self.wrongType(at(key)) }
        return members
    }

    /// `Decodable` through the same rules: reads the value, then builds from it; a `JobError` becomes a
    /// `DecodingError` naming the rule.
    static func decode<T>(from decoder: any Decoder, _ build: (PayloadValue) throws(JobError) -> T) throws -> T {
        do {
            return try build(try PayloadValue(from: decoder))
        } catch let error as JobError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    func optionalObject(_ key: String) throws(JobError) -> [String: PayloadValue]? {
        guard let value = optional(key) else { return nil }
        guard case .object(let members) = value else { throw Self.wrongType(at(key)) }
        return members
    }
}

extension Job {
    /// Reads a job from its JSON value, by the rules of `schemas/job.schema.json`.
    public init(json value: PayloadValue) throws(JobError) {
        let fields = try JobFields(value, path: "")
        self.init(
            id: try fields.optionalString("id"),
            app: try fields.string("app"),
            target: try Target(json: try fields.value("target"), path: "target"),
            notification: try JobNotification(json: try fields.value("notification"), path: "notification"),
            sendAt: try fields.optionalString("send_at"),
            throttlePerSecond: try fields.optionalInt("throttle_per_second")
        )
    }

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in try Job(json: value) }
    }
}

extension Target {
    init(json value: PayloadValue, path: String) throws(JobError) {
        let fields = try JobFields(value, path: path)
        let present = ["tokens", "users", "topic", "all", "activity", "channel", "activity_tokens"].filter(fields.has)
        guard present.count == 1 else {
            throw JobError(
                .malformed,
                "not a job: \(path): target must have exactly one of tokens, users, topic, all, activity, channel, activity_tokens"
            )
        }
        let base: Target
        switch present[0] {
        case "tokens": base = .tokens(try fields.strings("tokens"))
        case "activity": base = .activity(try fields.string("activity"))
        case "channel": base = .channel(try fields.string("channel"))
        case "activity_tokens": base = .activityTokens(try fields.strings("activity_tokens"))
        case "users": base = .users(try fields.strings("users"))
        case "topic": base = .topic(try fields.string("topic"))
        default:
            guard case .bool(let all) = try fields.value("all") else { throw JobFields.wrongType(fields.at("all")) }
            guard all else { throw JobError(.malformed, "not a job: \(fields.at("all")): target.all must be true") }
            base = .all
        }
        guard fields.optional("locales") != nil else {
            self = base
            return
        }
        let locales = try fields.strings("locales")
        guard !locales.isEmpty else {
            throw JobError(.malformed, "not a job: \(fields.at("locales")): locales is empty")
        }
        switch base {
        case .topic, .all: self = .filtered(base, locales: locales)
        default:
            throw JobError(.malformed, "not a job: \(fields.at("locales")): locales narrows only topic and all targets")
        }
    }

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in try Target(json: value, path: "target") }
    }
}

extension JobNotification {
    init(json value: PayloadValue, path: String) throws(JobError) {
        let fields = try JobFields(value, path: path)
        self.init(
            pushType: try fields.optionalString("push_type"),
            priority: try fields.optionalInt("priority"),
            expiration: try fields.optionalInteger("expiration"),
            collapseID: try fields.optionalString("collapse_id"),
            aps: try fields.object("aps"),
            custom: try fields.optionalObject("custom"),
            localizations: try fields.optionalObject("localizations"),
            badgeIncrement: try fields.optionalInt("badge_increment")
        )
    }

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in
            try JobNotification(json: value, path: "notification")
        }
    }
}
