import APNSCore

/// Reading a job from its JSON value: the one definition of the wire shape's decoding rules, used on the worker's
/// hot path (`PreparedJob.decode`, without Codable) and by `Decodable` (which reads a `PayloadValue` first).
///
/// Errors name the field by its path (`target.tokens.3 has the wrong type`), never its value. Unknown fields of the
/// job, its target and its notification are refused with the nearest known name ("unknown field sendAt in the job;
/// did you mean send_at?"): the contract only ever adds optional fields, and a typo in one would otherwise be
/// ignored. The `aps` dictionary and `custom` are passed through as written. A field that is null counts as absent.
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

    /// Refuses the first member (in sorted order) that is not one of `known`, naming the nearest known one.
    func refuseUnknown(_ known: [String], in place: String) throws(JobError) {
        guard members.count > 0, let unknown = JobFieldSuggestion.firstUnknown(members.keys, known: known) else {
            return
        }
        throw JobError(.malformed, JobFieldSuggestion.message(unknown: unknown, in: place, known: known))
    }

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

    /// A whole number (`5` or `5.0`, as JSON Schema's `integer` allows) within `allowed`; a whole number outside it,
    /// however large, is out of range, not of the wrong type.
    func optionalInteger(_ key: String, _ allowed: ClosedRange<Int64>) throws(JobError) -> Int64? {
        guard let value = optional(key) else { return nil }
        let number: Int64
        switch value {
        case .integer(let integer): number = integer
        case .number(let double) where double.isFinite && double == double.rounded(.towardZero):
            guard let exact = Int64(exactly: double) else { throw Self.outOfRange(at(key), allowed) }
            number = exact
        case .number(let double) where double.isInfinite:
            throw Self.outOfRange(at(key), allowed)
        default: throw Self.wrongType(at(key))
        }
        guard allowed.contains(number) else { throw Self.outOfRange(at(key), allowed) }
        return number
    }

    func optionalInt(_ key: String, _ allowed: ClosedRange<Int64>) throws(JobError) -> Int? {
        try optionalInteger(key, allowed).map { Int($0) }
    }

    static func outOfRange(_ path: String, _ allowed: ClosedRange<Int64>) -> JobError {
        JobError(.outOfBounds, "\(path) is out of range (\(allowed.lowerBound) to \(allowed.upperBound))")
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
        try fields.refuseUnknown(Self.fieldNames, in: "the job")
        self.init(
            id: try fields.optionalString("id"),
            app: try fields.string("app"),
            target: try Target(json: try fields.value("target"), path: "target"),
            notification: try JobNotification(json: try fields.value("notification"), path: "notification"),
            sendAt: try fields.optionalString("send_at"),
            throttlePerSecond: try fields.optionalInt("throttle_per_second", 1...JobLimits.integerColumn.upperBound)
        )
    }

    /// The fields of a job, as `schemas/job.schema.json` names them.
    public static let fieldNames = ["id", "app", "target", "notification", "send_at", "throttle_per_second"]

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in try Job(json: value) }
    }
}

extension Target {
    init(json value: PayloadValue, path: String) throws(JobError) {
        let fields = try JobFields(value, path: path)
        try fields.refuseUnknown(Self.fieldNames, in: path)
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
        var target = base
        if fields.optional("locales") != nil {
            let locales = try fields.strings("locales")
            guard !locales.isEmpty else {
                throw JobError(.malformed, "not a job: \(fields.at("locales")): locales is empty")
            }
            switch base {
            case .topic, .all: target = .filtered(base, locales: locales)
            default:
                throw JobError(
                    .malformed, "not a job: \(fields.at("locales")): locales narrows only topic and all targets")
            }
        }
        if fields.optional("platforms") != nil {
            let names = try fields.strings("platforms")
            let at = fields.at("platforms")
            guard !names.isEmpty else { throw JobError(.malformed, "not a job: \(at): platforms is empty") }
            var platforms: [DevicePlatform] = []
            for (index, name) in names.enumerated() {
                guard let platform = DevicePlatform(rawValue: name) else {
                    throw JobError(.malformed, "not a job: \(at).\(index): a platform is ios, android or web")
                }
                guard !platforms.contains(platform) else {
                    throw JobError(.malformed, "not a job: \(at): platforms lists \(name) twice")
                }
                platforms.append(platform)
            }
            switch base {
            case .tokens, .users, .topic, .all: target = .platforms(target, platforms)
            default:
                throw JobError(
                    .malformed, "not a job: \(at): platforms narrows only tokens, users, topic and all targets")
            }
        }
        self = target
    }

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in try Target(json: value, path: "target") }
    }

    /// The fields of a target: one audience, `locales` beside a topic or `all`, and `platforms` beside a device
    /// audience.
    public static let fieldNames = [
        "tokens", "users", "topic", "all", "activity", "channel", "activity_tokens", "locales", "platforms",
    ]
}

extension JobNotification {
    init(json value: PayloadValue, path: String) throws(JobError) {
        let fields = try JobFields(value, path: path)
        try fields.refuseUnknown(Self.fieldNames, in: path)
        self.init(
            pushType: try fields.optionalString("push_type"),
            priority: try fields.optionalInt("priority", Int64(Int32.min)...Int64(Int32.max)),
            expiration: try fields.optionalInteger("expiration", JobLimits.expiration),
            collapseID: try fields.optionalString("collapse_id"),
            aps: try fields.object("aps"),
            custom: try fields.optionalObject("custom"),
            localizations: try fields.optionalObject("localizations"),
            badgeIncrement: try fields.optionalInt("badge_increment", JobLimits.integerColumn),
            fcm: try fields.optionalObject("fcm"),
            webpush: try fields.optionalObject("webpush")
        )
    }

    /// The fields of a notification.
    public static let fieldNames = [
        "push_type", "priority", "expiration", "collapse_id", "aps", "custom", "localizations", "badge_increment",
        "fcm", "webpush",
    ]

    public init(from decoder: any Decoder) throws {
        self = try JobFields.decode(from: decoder) { value throws(JobError) in
            try JobNotification(json: value, path: "notification")
        }
    }
}
