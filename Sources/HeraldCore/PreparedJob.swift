import APNSCore
import Foundation

/// A job that passed validation: its notification encoded once, its tokens normalised, ready to fan out.
public struct PreparedJob: Sendable {
    /// The job id (the producer's, or one the worker assigned).
    public var id: String
    /// The app id.
    public var app: String
    /// The audience; explicit tokens are already normalised.
    public var audience: Audience
    /// Tokens from the job that are not device tokens: each fails alone, the rest of the job goes on.
    public var invalidTokenCount: Int
    /// The request headers and body shared by every device.
    public var template: NotificationTemplate

    /// The resolved form of `Target`.
    public enum Audience: Sendable, Hashable {
        case tokens([DeviceToken])
        case users([String])
        case topic(String)
        case all
    }
}

/// Everything of an APNs request except the device token.
public struct NotificationTemplate: Sendable, Hashable {
    public var pushType: PushType
    public var priority: Priority?
    public var expiration: Int64?
    public var collapseID: String?
    public var payload: [UInt8]

    /// The request for one device to `topic`.
    public func request(to token: DeviceToken, bundleID: String) -> APNSRequest {
        APNSRequest(
            deviceToken: token,
            topic: pushType.topic(forBundleID: bundleID),
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload
        )
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
        let job: Job
        do {
            job = try JSONDecoder().decode(Job.self, from: Data(body))
        } catch let error as DecodingError {
            throw JobError(.malformed, "not a job: \(Self.describe(error))")
        } catch {
            throw JobError(.malformed, "not a job: the body is not JSON")
        }
        return try prepare(job, makeID: makeID)
    }

    /// Validates a decoded job.
    public static func prepare(_ job: Job, makeID: () -> String) throws(JobError) -> PreparedJob {
        guard !job.app.isEmpty else { throw JobError(.malformed, "app is empty") }
        if let id = job.id {
            guard !id.isEmpty, id.utf8.count <= 128 else {
                throw JobError(.malformed, "id must be 1 to 128 characters")
            }
        }

        var invalid = 0
        let audience: Audience
        switch job.target {
        case .tokens(let raw):
            guard !raw.isEmpty else { throw JobError(.invalidTarget, "target.tokens is empty") }
            guard raw.count <= maximumListedRecipients else {
                throw JobError(.invalidTarget, "target.tokens has \(raw.count) entries, over \(maximumListedRecipients)")
            }
            var seen = Set<DeviceToken>()
            var tokens: [DeviceToken] = []
            for text in raw {
                if let token = try? DeviceToken(parsing: text) {
                    if seen.insert(token).inserted { tokens.append(token) }
                } else {
                    invalid += 1
                }
            }
            audience = .tokens(tokens)
        case .users(let users):
            guard !users.isEmpty else { throw JobError(.invalidTarget, "target.users is empty") }
            guard users.count <= maximumListedRecipients else {
                throw JobError(.invalidTarget, "target.users has \(users.count) entries, over \(maximumListedRecipients)")
            }
            audience = .users(Array(Set(users)).sorted())
        case .topic(let topic):
            guard !topic.isEmpty else { throw JobError(.invalidTarget, "target.topic is empty") }
            audience = .topic(topic)
        case .all:
            audience = .all
        }

        let template = try NotificationTemplate(job.notification)
        return PreparedJob(
            id: job.id ?? makeID(),
            app: job.app,
            audience: audience,
            invalidTokenCount: invalid,
            template: template
        )
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return joined.isEmpty ? "the message" : joined
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field \(parent == "the message" ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty && context.underlyingError != nil
                ? "the body is not JSON" : "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "undecodable"
        }
    }
}

extension NotificationTemplate {
    /// Builds the template from a job's notification, encoding the payload once and checking Apple's rules.
    public init(_ notification: JobNotification) throws(JobError) {
        let pushType = PushType(rawValue: notification.pushType ?? "alert")
        guard pushType.isKnown else {
            throw JobError(.invalidNotification, "push_type \"\(pushType.rawValue.prefix(40))\" is not an APNs push type")
        }
        if let custom = notification.custom, custom["aps"] != nil {
            throw JobError(.invalidNotification, "custom must not contain the key aps")
        }
        var body = notification.custom ?? [:]
        body["aps"] = .object(notification.aps)
        let payload: [UInt8]
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            payload = Array(try encoder.encode(body))
        } catch {
            throw JobError(.invalidNotification, "the notification cannot be encoded as JSON")
        }
        self.init(
            pushType: pushType,
            priority: notification.priority.map(Priority.init(rawValue:)),
            expiration: notification.expiration,
            collapseID: notification.collapseID,
            payload: payload
        )
        // Apple's rules are checked on a request with a placeholder token: only the token check depends on it.
        do {
            try request(to: DeviceToken(trustedHex: "00"), bundleID: "app").validate()
        } catch {
            throw JobError(.invalidNotification, error.message)
        }
    }
}
