import APNSCore

/// The bounds every job is checked against before anything else happens: each number within the range of the
/// column or header it lands in, each string within its length and free of control characters, each list bounded.
/// A job outside them is rejected with a `JobError` naming the field and the rule (never the value), so the worker
/// parks it once and the API answers 400; nothing outside them reaches arithmetic, a header or a SQL column.
public enum JobLimits {
    /// PostgreSQL's `integer`: `throttle_per_second`, the badge counter.
    public static let integerColumn: ClosedRange<Int64> = Int64(Int32.min)...Int64(Int32.max)
    /// `apns-expiration`: 0 (do not store) or UNIX seconds up to the end of year 9999.
    public static let expiration: ClosedRange<Int64> = 0...253_402_300_799
    /// Characters (Unicode scalars, as JSON Schema's `maxLength` counts them) of a job id (`id`, the API's
    /// `Idempotency-Key`).
    public static let idCharacters = 128
    /// Characters of an app id.
    public static let appCharacters = 200
    /// Characters of a user id or a topic.
    public static let nameCharacters = 256
    /// Characters of a Live Activity id, an activity type or a channel id.
    public static let activityIDCharacters = 200
    /// Entries of `target.locales`.
    public static let locales = 50
    /// Keys of `notification.localizations`.
    public static let localizations = 100
    /// Characters of a BCP 47 tag.
    public static let tagCharacters = 35

    /// Checks a job's scalar fields and lists (the notification's headers are checked by Apple's rules, in
    /// `NotificationTemplate`). Called by `PreparedJob.prepare` for every job, from the broker or the API.
    static func check(_ job: Job) throws(JobError) {
        if let id = job.id { try text(id, field: "id", maximum: idCharacters) }
        try text(job.app, field: "app", maximum: appCharacters)
        try check(job.target, path: "target")
        if let rate = job.throttlePerSecond {
            try range(Int64(rate), 1...integerColumn.upperBound, field: "throttle_per_second")
        }
        let notification = job.notification
        if let expiration = notification.expiration {
            try range(expiration, Self.expiration, field: "notification.expiration")
        }
        if let increment = notification.badgeIncrement {
            try range(Int64(increment), integerColumn, field: "notification.badge_increment")
        }
        if let localizations = notification.localizations, localizations.count > Self.localizations {
            throw JobError(
                .outOfBounds,
                "notification.localizations has \(localizations.count) entries, over \(Self.localizations)")
        }
    }

    private static func check(_ target: Target, path: String) throws(JobError) {
        switch target {
        case .tokens, .all:
            break  // each token is parsed (and fails alone); the list's length is checked with the audience
        case .users(let users):
            for (index, user) in users.enumerated() {
                try text(user, field: "\(path).users.\(index)", maximum: nameCharacters)
            }
        case .topic(let topic):
            try text(topic, field: "\(path).topic", maximum: nameCharacters)
        case .activity(let id):
            try text(id, field: "\(path).activity", maximum: activityIDCharacters)
        case .channel(let id):
            guard ChannelID.isValid(id) else {
                throw JobError(
                    .invalidTarget,
                    "\(path).channel is not a channel id (standard base64 with its padding, at most "
                        + "\(ChannelID.maximumCharacters) characters)")
            }
        case .activityTokens:
            break  // parsed as tokens, each failing alone
        case .platforms(let base, _):
            try check(base, path: path)
        case .filtered(let base, let locales):
            try check(base, path: path)
            guard locales.count <= Self.locales else {
                throw JobError(.outOfBounds, "\(path).locales has \(locales.count) entries, over \(Self.locales)")
            }
            for (index, tag) in locales.enumerated() where !isTag(tag) {
                throw JobError(.outOfBounds, "\(path).locales.\(index) is not a BCP 47 tag (letters, digits, -)")
            }
        }
    }

    /// Whether `tag` is a BCP 47 tag as Herald accepts one (`target.locales`, the keys of
    /// `notification.localizations`, a device's locale): at most 35 characters, subtags of 1 to 8 ASCII letters or
    /// digits separated by `-` (or `_`, as Apple's locale identifiers write it), the first of letters only. The
    /// schemas' pattern is `^[A-Za-z]{1,8}([-_][A-Za-z0-9]{1,8})*$`. (So a tag holds no LIKE wildcard once `_` is
    /// normalised to `-`.)
    public static func isTag(_ tag: String) -> Bool {
        let bytes = Array(tag.utf8)
        guard !bytes.isEmpty, bytes.count <= tagCharacters else { return false }
        var subtag = 0
        var first = true
        for byte in bytes {
            if byte == 0x2D || byte == 0x5F {
                guard subtag > 0 else { return false }
                subtag = 0
                first = false
                continue
            }
            guard isLetter(byte) || (!first && byte >= 0x30 && byte <= 0x39) else { return false }
            subtag += 1
            guard subtag <= 8 else { return false }
        }
        return subtag > 0
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A non-empty string of at most `maximum` characters (Unicode scalars) with no control character (C0, DEL
    /// or C1).
    static func text(_ value: String, field: String, maximum: Int) throws(JobError) {
        guard !value.isEmpty else { throw JobError(.malformed, "\(field) is empty") }
        let count = value.unicodeScalars.count
        guard count <= maximum else {
            throw JobError(.outOfBounds, "\(field) is \(count) characters, over \(maximum)")
        }
        guard !hasControlCharacter(value) else {
            throw JobError(.outOfBounds, "\(field) contains a control character")
        }
    }

    /// Whether `value` has a C0 control character, DEL or a C1 control character (U+0080 to U+009F).
    public static func hasControlCharacter(_ value: String) -> Bool {
        value.unicodeScalars.contains(where: isControl)
    }

    /// Whether `scalar` is a C0 control character, DEL or a C1 control character: the schemas' character class
    /// `[\u0000-\u001f\u007f-\u009f]`.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func range(_ value: Int64, _ allowed: ClosedRange<Int64>, field: String) throws(JobError) {
        guard allowed.contains(value) else {
            throw JobError(
                .outOfBounds, "\(field) is out of range (\(allowed.lowerBound) to \(allowed.upperBound))")
        }
    }
}

/// The AMQP `timestamp` property, read as the producer meant it: AMQP says seconds, but producers also send
/// milliseconds, microseconds (Go's `UnixMicro`) and nanoseconds (Go's `UnixNano`, Python's `time_ns()`). A value
/// is never trusted: one outside 2000-01-01 to 2100-01-01 in seconds is ignored (the job counts as published when
/// the worker received it), so no arithmetic on it can overflow and no column receives a date out of range.
public enum PublishTimestamp {
    /// 2000-01-01T00:00:00Z and 2100-01-01T00:00:00Z in seconds.
    public static let plausibleSeconds: ClosedRange<Int64> = 946_684_800...4_102_444_800

    /// Milliseconds since 1970 for a plausible timestamp in seconds, else nil.
    public static func milliseconds(fromSeconds seconds: Int64?) -> Int64? {
        guard let seconds, plausibleSeconds.contains(seconds) else { return nil }
        return seconds * 1000
    }
}

extension JobLimits {
    /// Checks a job's identity as given by an operator or a caller (`herald devices restore`, the restore route):
    /// both non-empty, within their byte limits, free of control characters.
    public static func checkKey(app: String, id: String) throws(JobError) {
        try text(app, field: "app", maximum: appCharacters)
        try text(id, field: "id", maximum: idCharacters)
    }
}
