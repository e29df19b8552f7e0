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

    public init(id: String? = nil, app: String, target: Target, notification: JobNotification) {
        self.id = id
        self.app = app
        self.target = target
        self.notification = notification
    }
}

/// The audience of a job: exactly one of explicit tokens, user ids, a topic, or every device of the app.
public enum Target: Sendable, Hashable, Codable {
    case tokens([String])
    case users([String])
    case topic(String)
    case all

    private enum CodingKeys: String, CodingKey {
        case tokens, users, topic, all
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let present = container.allKeys
        guard present.count == 1, let key = present.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath,
                    debugDescription: "target must have exactly one of tokens, users, topic, all"
                )
            )
        }
        switch key {
        case .tokens: self = .tokens(try container.decode([String].self, forKey: .tokens))
        case .users: self = .users(try container.decode([String].self, forKey: .users))
        case .topic: self = .topic(try container.decode(String.self, forKey: .topic))
        case .all:
            guard try container.decode(Bool.self, forKey: .all) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .all,
                    in: container,
                    debugDescription: "target.all must be true"
                )
            }
            self = .all
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .tokens(let tokens): try container.encode(tokens, forKey: .tokens)
        case .users(let users): try container.encode(users, forKey: .users)
        case .topic(let topic): try container.encode(topic, forKey: .topic)
        case .all: try container.encode(true, forKey: .all)
        }
    }

    /// A label for logs and metrics (never the tokens or ids themselves).
    public var kind: String {
        switch self {
        case .tokens: "tokens"
        case .users: "users"
        case .topic: "topic"
        case .all: "all"
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

    enum CodingKeys: String, CodingKey {
        case pushType = "push_type"
        case priority, expiration
        case collapseID = "collapse_id"
        case aps, custom
    }

    public init(
        pushType: String? = nil,
        priority: Int? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        aps: [String: JSONValue],
        custom: [String: JSONValue]? = nil
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.aps = aps
        self.custom = custom
    }
}
