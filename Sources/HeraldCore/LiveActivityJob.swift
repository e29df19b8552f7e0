import APNSCore
import Foundation

/// What makes a job a Live Activity job (`push_type` `liveactivity`): its event, and what the worker resolves it
/// with before anything is sent (docs/live-activities.md).
///
/// A start goes to devices (`tokens`, `users`, `topic`, `all`): the worker sends it to each device's push-to-start
/// token for `aps.attributes-type`. An update or an end goes to an activity (`target.activity`: its update tokens)
/// or to a channel (`target.channel`: one broadcast). `target.activity_tokens` sends to tokens as given.
///
/// A class, so that `PreparedJob` (copied and destroyed for every job) carries one reference for it, nil for every
/// other job.
public final class LiveActivityJob: Sendable {
    /// `aps.event`.
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case start, update, end
    }

    /// What a job's newest event and priority budget are kept per.
    public enum Key: Sendable, Hashable, CustomStringConvertible {
        case activity(String)
        case channel(String)

        /// `activity` or `channel`, as stored.
        public var kind: String {
            switch self {
            case .activity: "activity"
            case .channel: "channel"
            }
        }

        /// The activity or channel id.
        public var id: String {
            switch self {
            case .activity(let id), .channel(let id): id
            }
        }

        public var description: String { "\(kind) \(id)" }
    }

    public let event: Event
    /// `aps.attributes-type` (starts): which push-to-start token of a device the start goes to.
    public let attributesType: String?
    /// Whether the event carries `aps.alert`: it lights the screen, so it asks for priority 10.
    public let alerting: Bool
    /// `aps.timestamp` as the producer gave it (seconds); nil lets Herald set it.
    public let timestamp: Int64?
    /// The activity or channel (nil for starts and for `activity_tokens`).
    public let key: Key?
    /// Whether the target names the tokens themselves (`activity_tokens`): nothing left to resolve.
    public let resolved: Bool

    /// How far ahead of now an `aps.timestamp` may be (clocks differ; an hour is far more than they do).
    public static let maximumTimestampLead: Int64 = 3600

    /// Apple's limit for a broadcast's payload; a send to a device keeps the push type's 4,096.
    public static let broadcastPayloadSize = 5120

    /// The payload limit for the job, if not the push type's.
    public var maximumPayloadSize: Int? {
        if case .channel = key { return Self.broadcastPayloadSize }
        return nil
    }

    /// Reads and checks a job's Live Activity fields; nil for a job of another push type (which may not use the
    /// Live Activity targets).
    init?(_ job: Job, now: Int64) throws(JobError) {
        let target = job.target
        guard job.notification.pushType == PushType.liveactivity.rawValue else {
            switch target {
            case .activity, .channel, .activityTokens:
                throw JobError(
                    .invalidTarget, "target.\(target.kind) is for Live Activity jobs (push_type liveactivity) only")
            default: return nil
            }
        }
        let aps = job.notification.aps
        guard case .string(let name)? = aps["event"], let event = Event(rawValue: name) else {
            throw JobError(.invalidNotification, "a liveactivity notification needs aps.event: start, update or end")
        }
        self.event = event
        alerting = aps["alert"] != nil
        if let value = aps["timestamp"] {
            guard let seconds = value.integerValue, (1...JobLimits.expiration.upperBound).contains(seconds) else {
                throw JobError(.invalidNotification, "aps.timestamp must be a whole positive number of seconds")
            }
            // The newest event wins, on the device and in Herald's record of the activity: one from the future
            // would make every later one look old.
            guard seconds <= now + Self.maximumTimestampLead else {
                throw JobError(
                    .invalidNotification, "aps.timestamp is more than an hour ahead of now (seconds since 1970)")
            }
            timestamp = seconds
        } else {
            timestamp = nil
        }
        for date in ["stale-date", "dismissal-date"] {
            guard let value = aps[date] else { continue }
            guard let seconds = value.integerValue, JobLimits.expiration.contains(seconds) else {
                throw JobError(.invalidNotification, "aps.\(date) must be a whole number of seconds since 1970")
            }
        }
        if aps["content-state"] != nil || event != .end {
            guard case .object? = aps["content-state"] else {
                throw JobError(.invalidNotification, "aps.content-state must be an object (required for \(name))")
            }
        }
        if event == .start {
            guard case .string(let type)? = aps["attributes-type"] else {
                throw JobError(.invalidNotification, "a start needs aps.attributes-type, the ActivityAttributes type")
            }
            try JobLimits.text(type, field: "notification.aps.attributes-type", maximum: JobLimits.activityIDCharacters)
            guard case .object? = aps["attributes"] else {
                throw JobError(.invalidNotification, "a start needs aps.attributes, an object")
            }
            attributesType = type
        } else {
            for startOnly in ["attributes-type", "attributes", "input-push-token", "input-push-channel"]
            where aps[startOnly] != nil {
                throw JobError(.invalidNotification, "aps.\(startOnly) belongs to a start, not an \(name)")
            }
            attributesType = nil
        }
        switch target {
        case .activity(let id):
            guard event != .start else {
                throw JobError(.invalidTarget, "a start goes to devices (tokens, users, topic, all), not an activity")
            }
            key = .activity(id)
            resolved = false
        case .channel(let id):
            guard event != .start else {
                throw JobError(.invalidTarget, "a start cannot be broadcast to a channel")
            }
            key = .channel(id)
            resolved = false
        case .activityTokens:
            key = nil
            resolved = true
        case .tokens, .users, .topic, .all, .filtered, .platforms:
            guard event == .start else {
                throw JobError(
                    .invalidTarget, "an \(name) goes to target.activity, target.channel or target.activity_tokens")
            }
            key = nil
            resolved = false
        }
        if job.sendAt != nil, key != nil {
            // A scheduled update would take its turn against later ones by its creation time; keep it simple.
            throw JobError(.invalidTarget, "send_at is not supported for Live Activity updates and ends")
        }
    }
}

extension Job {
    /// The job as Herald sends it: `aps.timestamp` set (if the producer gave none), a `stale-date` after it for
    /// starts and updates and a `dismissal-date` for ends (if none was given), the chosen `priority` and, when
    /// `tokens` are given, the target replaced by those activity tokens.
    public func finalizingLiveActivity(
        event: LiveActivityJob.Event,
        timestamp: Int64,
        settings: LiveActivitySettings,
        priority: Int,
        expiration: Int64? = nil,
        tokens: [String]?
    ) -> Job {
        var job = self
        var aps = notification.aps
        let stamp = aps["timestamp"]?.integerValue ?? timestamp
        aps["timestamp"] = .integer(stamp)
        if event != .end, aps["stale-date"] == nil {
            let after = settings.staleAfterSeconds ?? LiveActivitySettings.defaultStaleAfterSeconds
            aps["stale-date"] = .integer(stamp + Int64(after))
        }
        if event == .end, aps["dismissal-date"] == nil {
            let after = settings.dismissAfterSeconds ?? LiveActivitySettings.defaultDismissAfterSeconds
            aps["dismissal-date"] = .integer(stamp + Int64(after))
        }
        job.notification.aps = aps
        job.notification.priority = priority
        if let expiration { job.notification.expiration = expiration }
        if let tokens { job.target = .activityTokens(tokens) }
        return job
    }
}
