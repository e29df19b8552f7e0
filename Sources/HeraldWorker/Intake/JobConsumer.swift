import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ

/// Handles messages from `herald.jobs`: decodes and validates each, parks what can never succeed (with the reason in
/// a header), holds scheduled jobs, skips finished ids, and plans the rest. Acknowledges only after the outcome is
/// in PostgreSQL; every path ends in an ack, a park (then ack) or a requeue — never a crash.
struct JobConsumer: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    /// The apps in use (the apps file as last reloaded on SIGHUP), for each job's route.
    let apps: @Sendable () -> AppsFile
    let planner: Planner
    /// Delivers the jobs routed as one batch or as a group.
    let run: DeliveryRun
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger
    /// Small jobs waiting to be delivered in groups.
    let smallJobs: SmallJobQueue
    /// Who is planning which job, across every worker.
    let claims: PlanningClaims
    /// Resolves Live Activity jobs before planning.
    let liveActivities: LiveActivityStage
    /// Live Activity jobs to a channel: one broadcast each.
    let channelBroadcasts: ChannelBroadcastRun
    /// Updates and ends of one activity waiting behind the one in hand: only the newest is kept.
    let activityMailbox = LiveActivityMailbox()
    /// Holds work through outages of the database.
    var outages: OutageWaiter {
        OutageWaiter(store: store, logger: logger, onEvent: configuration.onJobHandled, clock: configuration.clock)
    }
    var intake: Intake { Intake(configuration: configuration) }

    /// Decodes and checks a delivery on the consumer's loop and returns what is left to do in a task of its own:
    /// parking it, registering it, or — for the first small job while no group is under way — delivering groups
    /// of small jobs until none is left. Other small jobs only join the queue.
    func accept(_ delivery: AMQPDelivery, consumer: AMQPConsumer) -> ConsumerLoop.Work? {
        metrics.jobsReceived.increment()
        // Metadata only for the paths that log: setting it costs a dictionary copy per message.
        var logger: Logger {
            var enriched = self.logger
            if let messageID = delivery.properties.messageID {
                enriched[metadataKey: "message_id"] = "\(messageID.prefix(64))"
            }
            return enriched
        }

        let job: PreparedJob
        let idGiven: Bool
        do {
            (job, idGiven) = try intake.job(delivery)
        } catch {
            let log = logger
            return { await park(delivery, jobID: nil, reason: error.description, consumer: consumer, logger: log) }
        }
        var jobLogger: Logger {
            var enriched = logger
            enriched[metadataKey: "job"] = "\(job.id)"
            return enriched
        }
        // One look at the apps in use (they change on SIGHUP) for this delivery, and the job's route, decided here
        // once.
        let route = Route.of(job, app: apps().app(job.app), batchSize: configuration.batchSize)
        if case .park(let refusal) = route {
            let log = jobLogger
            return {
                try? await store.recordRejectedJob(
                    id: job.id, app: String(job.app.prefix(200)), reason: refusal.description)
                await park(delivery, jobID: job.id, reason: refusal.description, consumer: consumer, logger: log)
            }
        }
        let spec: String
        do {
            // The body is the spec when it names its id and is UTF-8 (a JSON object with no NUL byte: not UTF-16 or
            // UTF-32, which JSON also allows); otherwise the decoded job is encoded again.
            if idGiven && delivery.body.first == UInt8(ascii: "{") && !delivery.body.contains(0) {
                spec = String(decoding: delivery.body, as: UTF8.self)
            } else {
                spec = String(decoding: try job.spec.jsonBytes(), as: UTF8.self)
            }
        } catch {
            let log = jobLogger
            return {
                await park(
                    delivery, jobID: job.id, reason: "the job could not be encoded again", consumer: consumer,
                    logger: log)
            }
        }
        var routed = job
        // A small job's FCM message is written now, while the job is in the caches, and sent within moments.
        if route == .smallGroup { routed.writeFCMParts() }
        let item = RoutedJob(
            delivery: delivery, job: routed, spec: spec, route: route,
            publishedAt: Intake.publishedAt(delivery.properties))
        if let key = job.liveActivity?.key {
            // Latest wins: while an event of the activity is in hand, a newer one replaces any that waits.
            let log = jobLogger
            switch activityMailbox.offer(item, key: ActivityKey(app: job.app, key: key)) {
            case .queued: return nil
            case .superseded(let older, let by):
                return { await supersede(older, by: by, consumer: consumer, logger: log) }
            case .copy(let copy):
                // Another copy of a job in hand or waiting (a redelivery, a producer's retry): that one goes on.
                return { try? await consumer.ack(copy.delivery) }
            case .run(let first):
                return {
                    var next: RoutedJob? = first
                    while let item = next {
                        await process(item, consumer: consumer, logger: log)
                        next = activityMailbox.finished(ActivityKey(app: job.app, key: key))
                    }
                }
            }
        }
        if route == .smallGroup {
            // Delivered with the other small jobs in hand: a few statements per group instead of several per job.
            // The task that finds no group under way delivers groups until none is left.
            guard smallJobs.add(item) else { return nil }
            return {
                while let group = smallJobs.nextGroup() { await deliver(group, consumer: consumer) }
            }
        }
        let log = jobLogger
        return { await process(item, consumer: consumer, logger: log) }
    }

    /// Registers and plans one job (delivering it here if it fits in one batch), holding the job's planning claim:
    /// a copy of a job that a live planner is planning is acknowledged without planning. That planner has not
    /// acknowledged its own copy, so if it dies, that copy comes back (redelivered) and resumes from the cursor.
    func process(_ item: RoutedJob, consumer: AMQPConsumer, logger: Logger) async {
        let (delivery, job) = (item.delivery, item.job)
        let event: JobEvent?
        do {
            // Held through a database outage, with the job's planning claim: the id makes a second try resume rather
            // than repeat (a batch that was sent is settled by the deliverer, which never sends it again:
            // `SentButNotSettled`). A redelivered copy may be the message of a planner that died a moment ago, whose
            // session PostgreSQL has not dropped yet (or of this process's planner, back through a broker
            // reconnection): it waits for the claim rather than taking that planner for alive. So does a copy the
            // scheduler published to resume paced planning: the planner that paused the job may not have let go yet.
            let resumed = delivery.properties.headers[ParkingHeader.resumedPlanning] != nil
            let wait = delivery.redelivered || resumed ? configuration.planningClaimWait : .zero
            event = try await outages.untilDone("planning a job") {
                try await planHoldingClaim(item, wait: wait, logger: logger)
            }
        } catch {
            await fail(delivery, job: job, error: error, consumer: consumer, logger: logger)
            return
        }
        // An ack that fails means the channel is gone: the broker hands the message out again, and the job id
        // makes that a duplicate.
        guard (try? await consumer.ack(delivery)) != nil else { return }
        if let event { configuration.onJobHandled?(event) }
    }

    /// Registers and plans `item` under its planning claim. A claim held elsewhere means another planner has the
    /// job only once the job's row exists (a planner registers first thing, and its own copy comes back if it
    /// dies): then this copy is acknowledged as a duplicate. Without a row, the holder has not registered yet, or
    /// is another job whose key collides with this one's: this copy waits for the claim, never acknowledged with
    /// nothing recorded.
    private func planHoldingClaim(_ item: RoutedJob, wait: Duration, logger: Logger) async throws
        -> JobEvent?
    {
        let job = item.job
        var wait = wait
        while true {
            let claimed: JobEvent?? = try await claims.withClaim(on: job.key, wait: wait) {
                try await registerAndPlan(item, logger: logger)
            }
            if let claimed { return claimed }
            if try await store.job(app: job.app, id: job.id) != nil {
                logger.info("job is being planned by another worker, not planned again")
                return .duplicate(app: job.app, id: job.id, state: .running)
            }
            // A drain hands the copy back (a transient failure while stopping) instead of waiting on.
            if FailureKind.isStopping { throw CancellationError() }
            logger.info("job's planning claim is held but the job has no row yet, waiting for the claim")
            wait = max(configuration.planningClaimWait, .seconds(1))
        }
    }

    /// The one way a job message that failed ends: handed back to the queue only if the worker is shutting down
    /// in the middle of a transient failure (another worker takes it up); otherwise parked with the reason, and
    /// for a failure that is the job's own (its values are refused) the job is marked failed with it.
    func fail(_ delivery: AMQPDelivery, job: PreparedJob?, error: any Error, consumer: AMQPConsumer, logger: Logger)
        async
    {
        if FailureKind.handBack(error) {
            logger.notice("shutting down, handing the job back", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
            return
        }
        let reason: String
        if FailureKind(error) == .permanent {
            reason = "\(error)"
            if let job { _ = try? await store.failJob(job.key, reason: reason) }
        } else {
            reason = "\(JobError.Code.failedRepeatedly): \(error)"
        }
        await park(delivery, jobID: job?.id, reason: reason, consumer: consumer, logger: logger)
    }

    /// Registers a job and plans it; the caller holds its planning claim. Returns the event to report, if any.
    private func registerAndPlan(_ item: RoutedJob, logger: Logger) async throws -> JobEvent? {
        let job = item.job
        switch try await store.register(job, spec: item.spec, publishedAt: item.publishedAt) {
        case .scheduled:
            logger.info("job scheduled")
            return .scheduled(app: job.app, id: job.id)
        case .duplicate(let state):
            logger.info("job already finished, not sent again", metadata: ["state": "\(state.rawValue)"])
            return .duplicate(app: job.app, id: job.id, state: state)
        case .plan(let cursor, let nextSeq, let planned):
            var job = job
            var route = item.route
            if case .channelBroadcast(let channel) = route {
                guard let app = apps().app(job.app) else {
                    throw JobError(.unknownApp, "app \(job.app.prefix(100)) is not in the apps file")
                }
                let state = try await channelBroadcasts.deliver(
                    job, channel: channel, app: app, publishedAt: item.publishedAt)
                logger.info("Live Activity job finished", metadata: ["state": "\(state.rawValue)"])
                return .finished(app: job.app, id: job.id, state: state)
            }
            if route == .liveActivity {
                switch try await liveActivities.prepare(job, publishedAt: item.publishedAt) {
                case .plan(let resolved):
                    job = resolved
                    guard let app = apps().app(job.app) else {
                        throw JobError(.unknownApp, "app \(job.app.prefix(100)) is not in the apps file")
                    }
                    route = Route.resolved(job, app: app, batchSize: configuration.batchSize)
                case .finished(let state):
                    logger.info("Live Activity job finished", metadata: ["state": "\(state.rawValue)"])
                    return .finished(app: job.app, id: job.id, state: state)
                }
            }
            let finished: JobState?
            if route == .planned {
                finished = try await planner.plan(job, cursor: cursor, nextSeq: nextSeq, planned: planned)
            } else {
                // One batch (a small job that came this way too: a copy, a redelivery, a scheduled one now due):
                // planned in one statement, then delivered here; its completion ends the job.
                let batch = try await planner.planOneBatch(job, planned: planned)
                switch try await run.deliver(batch) {
                case .completed(let state):
                    finished = state
                case .deferred:
                    // Its app took a send rate after the job was routed (a reload): the batch waits for its turn on
                    // the batches queue, as a planned one does, instead of with no queue holding it.
                    try await planner.handOver(batch, of: job)
                    return nil
                case .alreadyDone, .skipped, .unknownJob:
                    return nil
                }
            }
            guard let finished else { return nil }
            logger.info("job finished", metadata: ["state": "\(finished.rawValue)"])
            return .finished(app: job.app, id: job.id, state: finished)
        }
    }

    func park(_ delivery: AMQPDelivery, jobID: String?, reason: String, consumer: AMQPConsumer, logger: Logger) async {
        logger.warning("job parked", metadata: ["reason": "\(reason)"])
        metrics.jobsParked.increment()
        do {
            try await outages.untilDone("parking a job") {
                try await parking.park(
                    delivery.body,
                    properties: delivery.properties,
                    reason: reason,
                    attempts: 1,
                    origin: configuration.topology.jobs
                )
            }
            try await consumer.ack(delivery)
            configuration.onJobHandled?(.parked(id: jobID, reason: reason))
        } catch {
            // The broker is out of reach: the message comes back to a worker when it is reachable again.
            logger.error("parking failed, handing the job back", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}
