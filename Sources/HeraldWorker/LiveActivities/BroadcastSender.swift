import APNSChannels
import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import Logging
import Metrics
import NIOCore
import Synchronization

/// Sends Live Activity jobs to a channel (`target.channel`): one broadcast request, not one per device.
///
/// Apple's rules are checked before the request: the channel must be recorded for the app (`herald channels
/// create`), a channel that stores no message takes `apns-expiration` 0 only (Herald sets it when the job gives
/// none), and the payload may be 5,120 bytes. APNs' refusals end the job `failed` with the reason; a
/// ChannelNotRegistered also forgets the channel's record. 429 and 5xx are tried again a few times, with backoff.
struct BroadcastSender: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let clients: BroadcastClients
    let logger: Logger
    /// Pauses between tries of a broadcast APNs answered 429 or 5xx (a live update older than this is moot).
    var backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8)]

    func send(_ job: PreparedJob, channel: String, app: AppConfiguration, timestamp: Int64) async throws -> JobState {
        guard let live = job.liveActivity else { return .failed }
        guard let record = try await store.channel(app: job.app, id: channel) else {
            return try await refuse(
                job, reason: ChannelReason.channelNotRegistered,
                "channel \(channel.prefix(64)) is not recorded for app \(job.app) (herald channels create)")
        }
        let policy = ChannelStoragePolicy(rawValue: record.storagePolicy) ?? .mostRecent
        let requested = job.spec.notification.expiration
        if policy == .noStorage, let requested, requested != 0 {
            return try await refuse(
                job, reason: ChannelReason.badExpirationDate,
                "channel \(channel.prefix(64)) stores no message: its broadcasts take expiration 0 only")
        }
        let settings = app.liveActivitySettings
        let (wantsHigh, why) = LiveActivityStage.wantsHighPriority(job, live: live, settings: settings)
        let resolution = try await store.resolveLiveActivity(
            job.key, key: .channel(channel), event: live.event, timestamp: timestamp, wantsHighPriority: wantsHigh,
            budgetPerHour: settings.effectivePriorityBudgetPerHour, tokenLimit: 0
        ) { resolution in
            let spec = job.spec.finalizingLiveActivity(
                event: live.event, timestamp: timestamp, settings: settings,
                priority: resolution.highPriority ? 10 : 5, expiration: policy == .noStorage ? 0 : nil, tokens: nil)
            return (try LiveActivityStage.encode(spec), "channel")
        }
        if let newer = resolution.supersededBy {
            LiveActivityStage.count(live.event, priority: nil, why: "superseded")
            try await store.endUnsentJob(
                job.key, state: .cancelled, targetKind: "channel",
                reason: "superseded: job \(newer) carries a newer event of channel \(channel.prefix(64))")
            return .cancelled
        }
        let priority = resolution.highPriority ? 10 : 5
        LiveActivityStage.count(live.event, priority: priority, why: wantsHigh && priority == 5 ? "budget_spent" : why)
        let notification = job.spec.finalizingLiveActivity(
            event: live.event, timestamp: timestamp, settings: settings, priority: priority,
            expiration: policy == .noStorage ? 0 : nil, tokens: nil
        ).notification
        let template = try NotificationTemplate(notification, maximumPayloadSize: BroadcastRequest.maximumPayloadBytes)
        // The same `apns-request-id` on every try of the job's broadcast, so that a retried one is recognisable.
        let request = BroadcastRequest(
            channelID: channel, payload: template.payload, priority: Priority(rawValue: priority),
            expiration: notification.expiration,
            requestID: NotificationID(app: job.app, job: job.id).id(forChannel: channel).description)
        if let violation = request.ruleViolation(policy: policy) {
            return try await refuse(job, reason: violation.reason, violation.message)
        }

        let client = try clients.client(for: app, directory: configuration.appsDirectory)
        var tries = 0
        while true {
            let result: BroadcastResult
            do {
                result = try await client.broadcast(request)
            } catch {
                guard error.isTransient, tries < backoff.count else {
                    return try await refuse(job, reason: error.reason ?? "ConnectionFailed", error.message)
                }
                try await configuration.clock.sleep(backoff[tries])
                tries += 1
                continue
            }
            if result.isSuccess {
                Self.count("sent", reason: "")
                try await store.finishBroadcast(job.key, sent: true, reason: nil)
                return .done
            }
            let reason = result.reason ?? "status \(result.status)"
            if result.isTransient, tries < backoff.count {
                Self.count("retried", reason: reason)
                try await configuration.clock.sleep(backoff[tries])
                tries += 1
                continue
            }
            if reason == ChannelReason.channelNotRegistered {
                // APNs no longer knows the channel (deleted elsewhere, or an environment mix-up): forget it.
                try await store.deleteChannelRecord(app: job.app, id: channel)
            }
            return try await refuse(job, reason: reason, "APNs refused the broadcast (\(result.status))")
        }
    }

    /// Ends the job `failed` with `reason: message`.
    private func refuse(_ job: PreparedJob, reason: String, _ message: String) async throws -> JobState {
        Self.count("failed", reason: reason)
        logger.warning("broadcast not sent", metadata: ["reason": "\(reason)"])
        try await store.finishBroadcast(job.key, sent: false, reason: "\(reason): \(message)")
        return .failed
    }

    /// `herald_live_activity_broadcasts_total{outcome, reason}`. The reason is APNs' (a word such as
    /// `ChannelNotRegistered`); anything else an endpoint answers counts as `other`, so the label stays bounded.
    static func count(_ outcome: String, reason: String) {
        let bounded = reason.utf8.count <= 40 && reason.unicodeScalars.allSatisfy { $0.properties.isAlphabetic }
        Counter(
            label: "herald_live_activity_broadcasts_total",
            dimensions: [("outcome", outcome), ("reason", bounded ? reason : "other")]
        ).increment()
    }
}

/// One channel client per app, made when the app first broadcasts; shut down with the worker. An app whose entry
/// changed (a SIGHUP reload: a rotated key, another host) gets a new client; the old one is shut down with the
/// worker, so a broadcast in flight on it finishes.
final class BroadcastClients: Sendable {
    private let clients = Mutex<
        (current: [String: (AppConfiguration, APNSChannelsClient)], retired: [APNSChannelsClient])
    >(
        ([:], []))
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    init(eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    func client(for app: AppConfiguration, directory: String) throws(ConfigurationError) -> APNSChannelsClient {
        let result: Result<APNSChannelsClient, ConfigurationError> = clients.withLock { clients in
            if let (configured, client) = clients.current[app.id], configured == app { return .success(client) }
            do throws(ConfigurationError) {
                let client = try APNSChannelsClient(
                    app: app, directory: directory, eventLoopGroup: eventLoopGroup, logger: logger)
                if let (_, old) = clients.current.updateValue((app, client), forKey: app.id) {
                    clients.retired.append(old)
                }
                return .success(client)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = ([:], []) }
            return clients.current.values.map(\.1) + clients.retired
        }
        for client in all { await client.shutdown() }
    }
}
