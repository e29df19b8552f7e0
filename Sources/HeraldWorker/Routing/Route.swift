import HeraldCore

/// How a validated job goes through the worker: decided once, at intake (`Route.of`), and nowhere else. "Does this
/// job fit one batch?" is answered here: a job of listed tokens, at most `batchSize` of them, sent at no rate (a
/// throttled job's batches wait for their turns on `herald.batches`, which a job message must not do). An audience
/// read from PostgreSQL (users, a topic, every device) is planned, however small it turns out to be.
enum Route: Sendable, Equatable {
    /// Delivered with the other small jobs in hand, in groups of one delivery run: one batch whose payload is the
    /// same for every device, no schedule, no rate, one environment for the app.
    case smallGroup
    /// One batch, planned in one statement (`Planner.planOneBatch`) and then delivered by the job's own consumer;
    /// the batch's completion ends the job.
    case oneBatch
    /// Planned into batches on `herald.batches`, which every worker shares.
    case planned
    /// A Live Activity job to devices or an activity: resolved first (`LiveActivityStage`: its tokens), then routed
    /// as what it resolved to (`Route.resolved`).
    case liveActivity
    /// A Live Activity job to a channel: one broadcast request, a unit of delivery of its own
    /// (`ChannelBroadcastRun`).
    case channelBroadcast(channel: String)
    /// Never sent: parked with this reason.
    case park(JobError)

    /// The route of `job`, whose app the apps file in use has as `app` (nil: not in the apps file).
    static func of(_ job: PreparedJob, app: AppConfiguration?, batchSize: Int) -> Route {
        guard let app else {
            return .park(JobError(.unknownApp, "app \(job.app.prefix(100)) is not in the apps file"))
        }
        if let live = job.liveActivity {
            if case .channel(let channel)? = live.key { return .channelBroadcast(channel: channel) }
            return .liveActivity
        }
        let route = resolved(job, app: app, batchSize: batchSize)
        guard route == .oneBatch, job.sendAt == nil, !job.template.variesPerDevice, !app.sendsPerDeviceEnvironment,
            !job.listsWebEndpoints
        else { return route }
        // A group reads nothing per device: not a payload that varies per device, nor each device's environment. A
        // listed token's platform follows its form (an APNs token is hexadecimal), so an app with FCM is grouped too; a
        // browser's endpoint needs its keys from the store, so a job listing one is not.
        return .smallGroup
    }

    /// The route of a job whose target names its tokens or an audience: one batch or planned.
    static func resolved(_ job: PreparedJob, app: AppConfiguration, batchSize: Int) -> Route {
        guard case .tokens(let tokens) = job.audience, tokens.count <= batchSize,
            app.sendRate(throttle: job.throttlePerSecond) == nil
        else { return .planned }
        return .oneBatch
    }
}
