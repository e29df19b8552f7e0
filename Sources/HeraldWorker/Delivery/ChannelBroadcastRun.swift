import APNSChannels
import APNSCore
import HeraldCore
import HeraldStore
import Logging

/// A Live Activity job to a channel (`target.channel`): one unit of delivery, one broadcast request rather than one
/// per device, through the stages in order: prepare (here: the channel's record and storage policy, the activity's
/// resolution — superseded, or its priority from the budget — and the request, held to Apple's rules), send
/// (`ChannelSender`, transient answers tried again with backoff), settle (`ChannelSettlement`: the answer as a plan),
/// commit (`ChannelCommit`: the job's end, and a channel APNs no longer knows forgotten).
struct ChannelBroadcastRun: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let sender: ChannelSender
    let commit: ChannelCommit
    let logger: Logger

    /// Broadcasts `job` to `channel` of `app`; returns the state the job ended in.
    func deliver(
        _ job: PreparedJob, channel: String, app: AppConfiguration, publishedAt: Int64?
    ) async throws -> JobState {
        guard let live = job.liveActivity else { return .failed }
        let timestamp = live.timestamp ?? publishedAt.map { $0 / 1000 } ?? configuration.clock.unixSeconds
        guard let record = try await store.channel(app: job.app, id: channel) else {
            return try await commit.carryOut(
                ChannelSettlement.refusal(
                    reason: ChannelReason.channelNotRegistered,
                    "channel \(channel.prefix(64)) is not recorded for app \(job.app) (herald channels create)"),
                job: job, channel: channel)
        }
        let policy = ChannelStoragePolicy(rawValue: record.storagePolicy) ?? .mostRecent
        if policy == .noStorage, let requested = job.spec.notification.expiration, requested != 0 {
            return try await commit.carryOut(
                ChannelSettlement.refusal(
                    reason: ChannelReason.badExpirationDate,
                    "channel \(channel.prefix(64)) stores no message: its broadcasts take expiration 0 only"),
                job: job, channel: channel)
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
            return try await commit.supersede(job, by: newer, channel: channel)
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
            return try await commit.carryOut(
                ChannelSettlement.refusal(reason: violation.reason, violation.message), job: job, channel: channel)
        }
        let answer = try await sender.send(request, app: app)
        return try await commit.carryOut(ChannelSettlement.plan(answer), job: job, channel: channel)
    }
}
