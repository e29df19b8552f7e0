import APNSCore

/// A notification job as producers publish it to `herald.jobs` (see `schemas/job.schema.json`).
///
/// The wire shape is a stable contract: later versions add optional fields only.
public struct Job: Sendable, Hashable, Codable {
    /// The idempotency key; the worker assigns one if the producer did not.
    public var id: String?
    /// The app id from the apps file.
    public var app: String
    /// Who receives it.
    public var target: Target
    /// What they receive.
    public var notification: JobNotification
    /// When to send (RFC 3339); absent or past means now.
    public var sendAt: String?
    /// An upper bound on this job's send rate across all workers.
    public var throttlePerSecond: Int?

    enum CodingKeys: String, CodingKey {
        case id, app, target, notification
        case sendAt = "send_at"
        case throttlePerSecond = "throttle_per_second"
    }

    public init(
        id: String? = nil,
        app: String,
        target: Target,
        notification: JobNotification,
        sendAt: String? = nil,
        throttlePerSecond: Int? = nil
    ) {
        self.id = id
        self.app = app
        self.target = target
        self.notification = notification
        self.sendAt = sendAt
        self.throttlePerSecond = throttlePerSecond
    }
}

/// The audience of a job: exactly one of explicit tokens, user ids, a topic, or every device of the app; for Live
/// Activity jobs (`push_type` `liveactivity`) also an activity, a broadcast channel, or activity tokens.
public enum Target: Sendable, Hashable, Codable {
    case tokens([String])
    case users([String])
    case topic(String)
    case all
    /// `{"activity": "<id>"}`: every update token registered for the Live Activity (update and end events).
    case activity(String)
    /// `{"channel": "<channel id>"}`: one broadcast to the channel's subscribers (update and end events).
    case channel(String)
    /// `{"activity_tokens": [...]}`: push-to-start or update tokens that ActivityKit issued, sent as given. Herald
    /// stores a Live Activity job in this form once it has found its tokens.
    case activityTokens([String])
    /// A topic or every device (`all`), narrowed to devices whose stored locale matches one of `locales`
    /// (`"fr"` matches `fr`, `fr-CA`, …): `{"all": true, "locales": ["fr"]}`.
    indirect case filtered(Target, locales: [String])
    /// A device audience (tokens, users, a topic, `all`, with its locales) narrowed to devices of these platforms:
    /// `{"users": ["u1"], "platforms": ["android"]}`.
    indirect case platforms(Target, [DevicePlatform])

    private enum CodingKeys: String, CodingKey {
        case tokens, users, topic, all, locales, platforms, activity, channel
        case activityTokens = "activity_tokens"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .tokens(let tokens): try container.encode(tokens, forKey: .tokens)
        case .users(let users): try container.encode(users, forKey: .users)
        case .topic(let topic): try container.encode(topic, forKey: .topic)
        case .all: try container.encode(true, forKey: .all)
        case .activity(let id): try container.encode(id, forKey: .activity)
        case .channel(let id): try container.encode(id, forKey: .channel)
        case .activityTokens(let tokens): try container.encode(tokens, forKey: .activityTokens)
        case .filtered(let base, let locales):
            try base.encode(to: encoder)
            try container.encode(locales, forKey: .locales)
        case .platforms(let base, let platforms):
            try base.encode(to: encoder)
            try container.encode(platforms.map(\.rawValue), forKey: .platforms)
        }
    }

    /// A label for logs and metrics (never the tokens or ids themselves).
    public var kind: String {
        switch self {
        case .tokens: "tokens"
        case .users: "users"
        case .topic: "topic"
        case .all: "all"
        case .activity: "activity"
        case .channel: "channel"
        case .activityTokens: "activity_tokens"
        case .filtered(let base, _), .platforms(let base, _): base.kind
        }
    }
}

/// The notification of a job: the `aps` dictionary, custom keys and the APNs headers.
public struct JobNotification: Sendable, Hashable, Codable {
    /// `apns-push-type`; defaults to `alert`.
    public var pushType: String?
    /// `apns-priority`: 10, 5 or 1.
    public var priority: Int?
    /// `apns-expiration` in UNIX seconds; a job past it is not sent.
    public var expiration: Int64?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// The `aps` dictionary, passed through as written.
    public var aps: [String: JSONValue]
    /// Custom keys placed beside `aps`.
    public var custom: [String: JSONValue]?
    /// Per-locale variants of `aps.alert` (BCP 47 tag → alert), chosen by each device's stored locale with
    /// fallback (zh-Hant-TW → zh-Hant → zh → the default `aps.alert`).
    public var localizations: [String: JSONValue]?
    /// Adds this to each device's stored badge counter and sends the resulting absolute value as `aps.badge`.
    public var badgeIncrement: Int?
    /// FCM-only fields of the Message resource, merged over the message Herald builds for Android devices
    /// (`FCMMessageOverrides`, docs/fcm.md).
    public var fcm: [String: JSONValue]?
    /// Web Push options for browsers: `declarative` (send the Declarative Web Push form) and `navigate` (the https
    /// URL the notification opens), each overriding the app's (docs/webpush.md).
    public var webpush: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case pushType = "push_type"
        case priority, expiration
        case collapseID = "collapse_id"
        case aps, custom, localizations
        case badgeIncrement = "badge_increment"
        case fcm
        case webpush
    }

    public init(
        pushType: String? = nil,
        priority: Int? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        aps: [String: JSONValue],
        custom: [String: JSONValue]? = nil,
        localizations: [String: JSONValue]? = nil,
        badgeIncrement: Int? = nil,
        fcm: [String: JSONValue]? = nil,
        webpush: [String: JSONValue]? = nil
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.aps = aps
        self.custom = custom
        self.localizations = localizations
        self.badgeIncrement = badgeIncrement
        self.fcm = fcm
        self.webpush = webpush
    }
}

extension Job {
    /// The broker priority of the job's messages on the work queues (`herald.jobs`, `herald.batches`), from its
    /// APNs priority and its lane (`brokerPriority(apnsPriority:bulk:)`).
    public func brokerPriority(bulk: Bool) -> UInt8 {
        Self.brokerPriority(apnsPriority: notification.priority, bulk: bulk)
    }

    /// The broker priority of a message of a notification at `apnsPriority` (nil: APNs' default, 10): a queue
    /// hands out the highest first, so notifications at 10 go before those at 5 and 1, and within each, the
    /// transactional lane (job messages, small jobs, a job's first few batches) before the bulk lane (the rest of
    /// a large job's batches and its resumed planning).
    ///
    /// | | transactional | bulk |
    /// |---|---|---|
    /// | apns-priority 10 | 5 | 2 |
    /// | apns-priority 5, 1 | 1 | 0 |
    ///
    /// A classic queue has these four levels (`x-max-priority` 3, which 5 counts as); a quorum queue of RabbitMQ 4
    /// two (5 high, the rest normal), earlier ones none.
    public static func brokerPriority(apnsPriority: Int?, bulk: Bool) -> UInt8 {
        switch ((apnsPriority ?? 10) == 10, bulk) {
        case (true, false): 5
        case (true, true): 2
        case (false, false): 1
        case (false, true): 0
        }
    }
}

extension PreparedJob {
    /// The broker priority of the job's messages in `bulk` or the transactional lane (`Job.brokerPriority`).
    public func brokerPriority(bulk: Bool) -> UInt8 {
        Job.brokerPriority(apnsPriority: template.priority?.rawValue, bulk: bulk)
    }
}
