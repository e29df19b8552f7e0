import APNSCore
import FCMCore
import Foundation
import WebPushCore

/// A job that passed validation: its notification encoded once, its tokens normalised, ready to fan out.
///
/// A value with its fields behind one reference, copied on write: a job is handed from stage to stage (the intake,
/// a group, its unit, its requests) and each hand-over of the plain struct retained and released every string,
/// array and dictionary of the job and its spec, a few hundred atomic operations per single-device job.
public struct PreparedJob: Sendable {
    /// The stored fields.
    struct Fields: Sendable {
        var id: String
        var app: String
        var audience: Audience
        var invalidTokenCount: Int
        var template: NotificationTemplate
        var spec: Job
        var sendAt: Int64?
        var throttlePerSecond: Int?
        var liveActivity: LiveActivityJob?
        var platforms: Set<DevicePlatform>?
        var listsWebEndpoints = false
        var listsAndroid = false
    }

    /// Mutated only while uniquely referenced (`fields`' modify), so sharing it between threads is safe.
    private final class Storage: @unchecked Sendable {
        var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    private var storage: Storage

    init(_ fields: Fields) {
        storage = Storage(fields)
    }

    private var fields: Fields {
        _read { yield storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    /// The job id (the producer's, or one the worker assigned).
    public var id: String {
        get { storage.fields.id }
        _modify { yield &fields.id }
    }
    /// The app id.
    public var app: String {
        get { storage.fields.app }
        _modify { yield &fields.app }
    }
    /// The job's identity: ids are scoped by app.
    public var key: JobKey { JobKey(app: app, id: id) }
    /// The audience; explicit tokens are already normalised.
    public var audience: Audience {
        _read { yield storage.fields.audience }
        _modify { yield &fields.audience }
    }
    /// Tokens from the job that are not device tokens: each fails alone, the rest of the job goes on.
    public var invalidTokenCount: Int {
        get { storage.fields.invalidTokenCount }
        _modify { yield &fields.invalidTokenCount }
    }
    /// The request headers and body shared by every device.
    public var template: NotificationTemplate {
        _read { yield storage.fields.template }
        _modify { yield &fields.template }
    }
    /// The job as published (with its id filled in), kept so that batches and the scheduler can rebuild it.
    public var spec: Job {
        _read { yield storage.fields.spec }
        _modify { yield &fields.spec }
    }
    /// When to send, in milliseconds since 1970; nil means now.
    public var sendAt: Int64? {
        get { storage.fields.sendAt }
        _modify { yield &fields.sendAt }
    }
    /// An upper bound on the send rate across all workers.
    public var throttlePerSecond: Int? {
        get { storage.fields.throttlePerSecond }
        _modify { yield &fields.throttlePerSecond }
    }
    /// For a Live Activity job (`push_type` `liveactivity`): its event and what the worker resolves it with.
    public var liveActivity: LiveActivityJob? {
        get { storage.fields.liveActivity }
        _modify { yield &fields.liveActivity }
    }
    /// `target.platforms`: only devices of these platforms are sent to; nil is every platform.
    public var platforms: Set<DevicePlatform>? {
        _read { yield storage.fields.platforms }
        _modify { yield &fields.platforms }
    }
    /// Whether `target.tokens` lists a browser subscription's endpoint: its keys are read from the store, so the job
    /// is not delivered in a group of small jobs (which reads no device).
    public var listsWebEndpoints: Bool {
        get { storage.fields.listsWebEndpoints }
        _modify { yield &fields.listsWebEndpoints }
    }
    /// Whether `target.tokens` lists an Android device (an FCM registration token or installation id) that the job
    /// sends to.
    public var listsAndroid: Bool {
        get { storage.fields.listsAndroid }
        _modify { yield &fields.listsAndroid }
    }

    /// Whether the job sends to a device of `platform`.
    public func reaches(_ platform: DevicePlatform) -> Bool { platforms?.contains(platform) ?? true }

    /// The resolved form of `Target`.
    public enum Audience: Sendable, Hashable {
        case tokens([DeviceToken])
        case users([String])
        case topic(String, locales: [String]?)
        case all(locales: [String]?)
        /// The update tokens of a Live Activity: the worker resolves them into `tokens` before planning.
        case activity(String)
        /// One broadcast to a Live Activity channel: never planned, sent by the worker as one request.
        case channel(String)

        /// A label for logs and the jobs table.
        public var kind: String {
            switch self {
            case .tokens: "tokens"
            case .users: "users"
            case .topic: "topic"
            case .all: "all"
            case .activity: "activity"
            case .channel: "channel"
            }
        }
    }
}

extension PreparedJob {
    /// The most explicit tokens or user ids one job message may carry; larger audiences use topics or `all`.
    public static let maximumListedRecipients = 10_000

    /// Decodes and validates a job message.
    ///
    /// - Parameters:
    ///   - body: the message body as published.
    ///   - makeID: called when the job has no id.
    /// - Throws: `JobError` naming the first rule the job breaks.
    public static func decode(_ body: [UInt8], makeID: () -> String) throws(JobError) -> PreparedJob {
        if containsEscapedNUL(body) {
            // PostgreSQL stores neither text nor jsonb with U+0000: such a job could never be recorded.
            throw JobError(.malformed, "a string contains U+0000 (\\u0000), which is not allowed")
        }
        let value: PayloadValue
        do {
            value = try PayloadValue(json: body)
        } catch {
            throw JobError(.malformed, "not a job: the body is not JSON (\(error))")
        }
        return try prepare(try Job(json: value), makeID: makeID)
    }

    /// Validates a decoded job. `now` (seconds since 1970) bounds a Live Activity event's timestamp.
    public static func prepare(
        _ job: Job, makeID: () -> String, now: Int64 = HeraldClock.system.unixSeconds
    ) throws(JobError) -> PreparedJob {
        guard !job.app.isEmpty else { throw JobError(.malformed, "app is empty") }
        try JobLimits.check(job)

        var invalid = 0
        var listsWebEndpoints = false
        var listsAndroid = false
        let audience: Audience
        // `platforms` narrows the audience within: the rest of the target is read as it would be without it.
        var target = job.target
        var platforms: Set<DevicePlatform>? = nil
        if case .platforms(let inner, let list) = target {
            target = inner
            platforms = Set(list)
        }
        switch target {
        case .tokens(let raw), .activityTokens(let raw):
            guard !raw.isEmpty else { throw JobError(.invalidTarget, "target.tokens is empty") }
            // Listed device tokens may be Android ones (an FCM registration token or installation id), kept as
            // given; activity tokens are ActivityKit's, hexadecimal only.
            let takesAndroid: Bool
            if case .tokens = target { takesAndroid = true } else { takesAndroid = false }
            guard raw.count <= maximumListedRecipients else {
                throw JobError(
                    .invalidTarget, "target.tokens has \(raw.count) entries, over \(maximumListedRecipients)")
            }
            var seen = Set<DeviceToken>()
            var tokens: [DeviceToken] = []
            var endpoints = false
            for text in raw {
                if takesAndroid, text.utf8.count == FCMTarget.fidLength, (try? FCMTarget(fid: text)) != nil {
                    // An installation id, kept as given (its case matters): it may look like hex.
                    let token = DeviceToken(trustedHex: text)
                    listsAndroid = true
                    if raw.count == 1 || seen.insert(token).inserted { tokens.append(token) }
                } else if let token = try? DeviceToken(parsing: text) {
                    // One token (most jobs) needs no set of those seen.
                    if raw.count == 1 || seen.insert(token).inserted { tokens.append(token) }
                } else if takesAndroid, (try? FCMTarget(token: text)) != nil || (try? FCMTarget(fid: text)) != nil {
                    let token = DeviceToken(trustedHex: text)
                    listsAndroid = true
                    if raw.count == 1 || seen.insert(token).inserted { tokens.append(token) }
                } else if takesAndroid, let endpoint = try? WebPushEndpoint(text) {
                    // A browser subscription, by its endpoint as registered.
                    let token = DeviceToken(trustedHex: endpoint.url)
                    if raw.count == 1 || seen.insert(token).inserted { tokens.append(token) }
                    endpoints = true
                } else {
                    invalid += 1
                }
            }
            audience = .tokens(tokens)
            listsWebEndpoints = endpoints
        case .users(let users):
            guard !users.isEmpty else { throw JobError(.invalidTarget, "target.users is empty") }
            guard users.count <= maximumListedRecipients else {
                throw JobError(
                    .invalidTarget, "target.users has \(users.count) entries, over \(maximumListedRecipients)")
            }
            audience = .users(Array(Set(users)).sorted())
        case .topic(let topic):
            guard !topic.isEmpty else { throw JobError(.invalidTarget, "target.topic is empty") }
            audience = .topic(topic, locales: nil)
        case .all:
            audience = .all(locales: nil)
        case .filtered(.topic(let topic), let locales):
            guard !topic.isEmpty else { throw JobError(.invalidTarget, "target.topic is empty") }
            audience = .topic(topic, locales: locales)
        case .filtered(_, let locales):
            audience = .all(locales: locales)
        case .activity(let id):
            audience = .activity(id)
        case .channel(let id):
            audience = .channel(id)
        case .platforms:
            throw JobError(.invalidTarget, "target.platforms is given once")
        }
        let liveActivity = try LiveActivityJob(job, now: now)

        var sendAt: Int64? = nil
        if let text = job.sendAt {
            guard let millis = RFC3339.milliseconds(text) else {
                throw JobError(.malformed, "send_at is not an RFC 3339 date-time")
            }
            sendAt = millis
        }

        let template = try NotificationTemplate(
            job.notification, maximumPayloadSize: liveActivity?.maximumPayloadSize)
        var spec = job
        spec.id = job.id ?? makeID()
        return PreparedJob(
            Fields(
                id: spec.id!,
                app: job.app,
                audience: audience,
                invalidTokenCount: invalid,
                template: template,
                spec: spec,
                sendAt: sendAt,
                throttlePerSecond: job.throttlePerSecond,
                liveActivity: liveActivity,
                platforms: platforms,
                listsWebEndpoints: listsWebEndpoints,
                listsAndroid: listsAndroid && (platforms?.contains(.android) ?? true)
            ))
    }

    /// Whether a JSON text has a `\u0000` escape in a string (an escaped backslash followed by `u0000` is text, not
    /// an escape). A raw NUL byte is not valid JSON and fails decoding anyway.
    static func containsEscapedNUL(_ body: [UInt8]) -> Bool {
        let backslash = UInt8(ascii: "\\")
        let u = UInt8(ascii: "u")
        let zero = UInt8(ascii: "0")
        var index = 0
        let end = body.count
        while index < end {
            guard body[index] == backslash else {
                index += 1
                continue
            }
            if index + 5 < end, body[index + 1] == u, body[index + 2] == zero, body[index + 3] == zero,
                body[index + 4] == zero, body[index + 5] == zero
            {
                return true
            }
            index += 2  // the escaped character, whatever it is
        }
        return false
    }
}
