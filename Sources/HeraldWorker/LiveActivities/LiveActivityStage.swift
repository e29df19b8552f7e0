import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import Logging
import Metrics

/// Turns a Live Activity job into what the pipeline sends (docs/live-activities.md), once, under the job's planning
/// claim and before planning:
/// - `aps.timestamp` (the job's publish time unless the producer set one), a default `stale-date`, and for an end a
///   default `dismissal-date`;
/// - the priority: 5 unless the job asks for 10, alerts, starts an activity or the app declares frequent updates;
///   an update or end of an activity or channel gets 10 only within the hour's budget (`priority_budget_per_hour`);
/// - an update or end older than one already resolved for its activity or channel is superseded, not sent;
/// - the tokens: a start's push-to-start tokens (of the devices its target selects, for `aps.attributes-type`), an
///   activity's update tokens (removed from the registry by its end).
///
/// The resolved job is stored as the job's spec with `target.activity_tokens`, so that a retry or a redelivery sends
/// exactly it. A broadcast to a channel is not resolved here: it is a unit of delivery of its own
/// (`Route.channelBroadcast`, `Delivery/ChannelBroadcastRun.swift`).
struct LiveActivityStage: Sendable {
    let configuration: WorkerConfiguration
    /// The apps in use (the apps file as last reloaded on SIGHUP).
    let apps: @Sendable () -> AppsFile
    let store: Store
    let logger: Logger

    /// What to do with the job next.
    enum Next: Sendable {
        /// Plan (and send) this job: its resolved form.
        case plan(PreparedJob)
        /// Nothing to plan: the job ended in this state (superseded, no token).
        case finished(JobState)
    }

    /// The most activity tokens one job resolves to: larger audiences are a channel's (docs/live-activities.md).
    static let maximumTokens = PreparedJob.maximumListedRecipients

    func prepare(_ job: PreparedJob, publishedAt: Int64?) async throws -> Next {
        guard let live = job.liveActivity else { return .plan(job) }
        // Never planned unresolved: its target names devices or an activity, not the tokens to send to.
        guard let app = apps().app(job.app) else {
            throw JobError(.unknownApp, "app \(job.app.prefix(100)) is not in the apps file")
        }
        if app.sendsPerDeviceEnvironment {
            // Activity tokens would go to the app's default environment, and a token of the other one would be
            // answered BadDeviceToken and pruned: refused until tokens carry their device's environment.
            throw JobError(
                .invalidTarget,
                "Live Activity tokens of app \(job.app.prefix(100)) cannot be sent yet: it serves both environments "
                    + "(environments in the apps file); broadcast to a channel instead")
        }
        // A redelivered or resumed job was resolved before: its stored spec is what it sends.
        if let stored = try await store.jobSpec(job.key),
            let resolved = try? PreparedJob.decode(Array(stored.utf8), makeID: { job.id }), Self.isFinal(resolved)
        {
            return .plan(resolved)
        }
        if Self.isFinal(job) { return .plan(job) }

        let settings = app.liveActivitySettings
        let stamp = timestamp(of: live, publishedAt)
        let (wantsHigh, why) = Self.wantsHighPriority(job, live: live, settings: settings)
        switch live.key {
        case .activity?:
            let resolution = try await store.resolveLiveActivity(
                job.key, key: live.key!, event: live.event, timestamp: stamp, wantsHighPriority: wantsHigh,
                budgetPerHour: settings.effectivePriorityBudgetPerHour, tokenLimit: Self.maximumTokens
            ) { resolution in
                let priority = resolution.highPriority ? 10 : 5
                let spec = job.spec.finalizingLiveActivity(
                    event: live.event, timestamp: stamp, settings: settings, priority: priority,
                    tokens: resolution.tokens)
                return (try Self.encode(spec), "activity_tokens")
            }
            if let newer = resolution.supersededBy {
                logger.info("Live Activity event superseded by a newer one", metadata: ["newer_job": "\(newer)"])
                Self.count(live.event, priority: nil, why: "superseded")
                try await store.endUnsentJob(
                    job.key, state: .cancelled, targetKind: "activity",
                    reason: "superseded: job \(newer) carries a newer event of activity \(live.key!.id)")
                return .finished(.cancelled)
            }
            if resolution.moreTokens {
                logger.warning("activity has more update tokens than one job sends; the rest are not sent")
            }
            let priority = resolution.highPriority ? 10 : 5
            Self.count(
                live.event, priority: priority, why: wantsHigh && !resolution.highPriority ? "budget_spent" : why)
            return try await plan(
                job, tokens: resolution.tokens, priority: priority, timestamp: stamp, settings: settings)
        default:
            // A start (to devices) or activity tokens as given: no activity to coalesce or budget.
            let priority = wantsHigh ? 10 : 5
            var tokens: [String]? = nil
            if live.event == .start, !live.resolved {
                tokens = try await startTokens(job, type: live.attributesType ?? "")
            }
            Self.count(live.event, priority: priority, why: why)
            let spec = job.spec.finalizingLiveActivity(
                event: live.event, timestamp: stamp, settings: settings, priority: priority, tokens: tokens)
            try await store.setResolvedSpec(job.key, spec: try Self.encode(spec), targetKind: "activity_tokens")
            return try await plan(spec, id: job.id)
        }
    }

    /// The resolved job to plan, or the end of a job that resolved to no token.
    private func plan(
        _ job: PreparedJob, tokens: [String], priority: Int, timestamp: Int64, settings: LiveActivitySettings
    ) async throws -> Next {
        let spec = job.spec.finalizingLiveActivity(
            event: job.liveActivity!.event, timestamp: timestamp, settings: settings, priority: priority,
            tokens: tokens)
        return try await plan(spec, id: job.id)
    }

    private func plan(_ spec: Job, id: String) async throws -> Next {
        guard case .activityTokens(let tokens) = spec.target, !tokens.isEmpty else {
            try await store.endUnsentJob(
                JobKey(app: spec.app, id: id), state: .done, targetKind: "activity_tokens", reason: nil)
            return .finished(.done)
        }
        return .plan(try PreparedJob.prepare(spec) { id })
    }

    /// The push-to-start tokens of the devices a start's target selects, in pages, at most `maximumTokens`.
    private func startTokens(_ job: PreparedJob, type: String) async throws -> [String] {
        let selection: DeviceSelection
        switch job.audience {
        case .tokens(let devices): selection = .tokens(devices)
        case .users(let users): selection = .users(users)
        case .topic(let topic, let locales):
            selection = .devices(locales.map { .locales(.topic(topic), $0) } ?? .topic(topic))
        case .all(let locales): selection = .devices(locales.map { .locales(.all, $0) } ?? .all)
        case .activity, .channel: return []
        }
        var tokens: [String] = []
        var cursor: String? = nil
        while true {
            let page = try await store.startTokens(
                app: job.app, activityType: type, devices: selection, after: cursor, limit: 1000)
            tokens += page.tokens.map(\.hex)
            guard tokens.count <= Self.maximumTokens else {
                throw JobError(
                    .invalidTarget,
                    "the start reaches more than \(Self.maximumTokens) push-to-start tokens; broadcast to a channel instead"
                )
            }
            guard page.more, let next = page.cursor else { return tokens }
            cursor = next
        }
    }

    /// The event's timestamp: the producer's, else when the job was published, else now (seconds).
    private func timestamp(of live: LiveActivityJob, _ publishedAt: Int64?) -> Int64 {
        live.timestamp ?? publishedAt.map { $0 / 1000 } ?? configuration.clock.unixSeconds
    }

    /// Whether a job is already in the form Herald sends: tokens, its timestamp and its priority set.
    static func isFinal(_ job: PreparedJob) -> Bool {
        guard let live = job.liveActivity else { return true }
        return live.resolved && live.timestamp != nil && job.spec.notification.priority != nil
    }

    /// Whether the job asks for priority 10, and why (a metric label).
    static func wantsHighPriority(_ job: PreparedJob, live: LiveActivityJob, settings: LiveActivitySettings)
        -> (Bool, String)
    {
        if let priority = job.spec.notification.priority { return (priority == 10, "requested") }
        if live.event == .start { return (true, "start") }
        if live.alerting { return (true, "alerting") }
        if settings.frequentUpdates == true { return (true, "frequent_updates") }
        return (false, "default")
    }

    /// `herald_live_activity_events_total{event, priority, why}`: the priority each event went at and why, or
    /// `priority="none"` for one that was not sent (superseded).
    static func count(_ event: LiveActivityJob.Event, priority: Int?, why: String) {
        Counter(
            label: "herald_live_activity_events_total",
            dimensions: [("event", event.rawValue), ("priority", priority.map(String.init) ?? "none"), ("why", why)]
        ).increment()
    }

    static func encode(_ job: Job) throws -> String {
        String(decoding: try job.jsonBytes(), as: UTF8.self)
    }
}
