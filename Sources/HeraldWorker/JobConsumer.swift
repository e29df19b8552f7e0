import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ

/// Handles messages from `herald.jobs`: decodes and validates each, parks what can never succeed (with the reason in
/// a header), holds scheduled jobs, skips finished ids, and plans the rest. Acknowledges only after the outcome is
/// in PostgreSQL; every path ends in an ack, a park (then ack) or a requeue — never a crash.
struct JobConsumer: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let planner: Planner
    let deliverer: BatchDeliverer
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger
    /// Small jobs waiting to be delivered in groups.
    let smallJobs: SmallJobQueue
    /// Who is planning which job, across every worker.
    let claims: PlanningClaims
    /// Holds work through outages of the database.
    var outages: OutageWaiter { OutageWaiter(store: store, logger: logger, onEvent: configuration.onJobHandled) }
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
        guard configuration.apps.app(job.app) != nil else {
            let reason = "\(JobError.Code.unknownApp): app \(job.app.prefix(100)) is not in the apps file"
            let log = jobLogger
            return {
                try? await store.recordRejectedJob(id: job.id, app: String(job.app.prefix(200)), reason: reason)
                await park(delivery, jobID: job.id, reason: reason, consumer: consumer, logger: log)
            }
        }
        let spec: String
        do {
            // The body is the spec when it names its id and is UTF-8 (a JSON object with no NUL byte: not UTF-16 or
            // UTF-32, which JSON also allows); otherwise the decoded job is encoded again.
            if idGiven && delivery.body.first == UInt8(ascii: "{") && !delivery.body.contains(0) {
                spec = String(decoding: delivery.body, as: UTF8.self)
            } else {
                spec = String(decoding: try JSONEncoder().encode(job.spec), as: UTF8.self)
            }
        } catch {
            let log = jobLogger
            return {
                await park(
                    delivery, jobID: job.id, reason: "the job could not be encoded again", consumer: consumer,
                    logger: log)
            }
        }
        let item = SmallJobQueue.Item(delivery: delivery, job: job, spec: spec)
        if isSmall(job) {
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

    /// A job of explicit tokens that fits in one batch, with the same payload for every device, no throttle and no
    /// schedule, for an app that sends every device to one environment: most jobs, in most deployments. (Groups
    /// read nothing per device; an app serving both environments needs each device's.)
    private func isSmall(_ job: PreparedJob) -> Bool {
        guard case .tokens(let tokens) = job.audience else { return false }
        return tokens.count <= configuration.batchSize && job.sendAt == nil && job.throttlePerSecond == nil
            && !job.template.variesPerDevice
            && configuration.apps.app(job.app)?.sendsPerDeviceEnvironment != true
    }

    /// Registers and plans one job (delivering it here if it fits in one batch), holding the job's planning claim:
    /// a copy of a job that a live planner is planning is acknowledged without planning. That planner has not
    /// acknowledged its own copy, so if it dies, that copy comes back (redelivered) and resumes from the cursor.
    private func process(_ item: SmallJobQueue.Item, consumer: AMQPConsumer, logger: Logger) async {
        let (delivery, job) = (item.delivery, item.job)
        let event: JobEvent?
        do {
            // Held through a database outage, with the job's planning claim: the id makes a second try resume rather
            // than repeat (a batch that was sent is settled by the deliverer, which never sends it again:
            // `SentButNotSettled`). A redelivered copy may be the message of a planner that died a moment ago, whose
            // session PostgreSQL has not dropped yet (or of this process's planner, back through a broker
            // reconnection): it waits for the claim rather than taking that planner for alive.
            let wait = delivery.redelivered ? configuration.planningClaimWait : .zero
            event = try await outages.untilDone("planning a job") {
                let claimed: JobEvent?? = try await claims.withClaim(on: job.key, wait: wait) {
                    try await registerAndPlan(item, logger: logger)
                }
                if let claimed { return claimed }
                logger.info("job is being planned by another worker, not planned again")
                return .duplicate(app: job.app, id: job.id, state: .running)
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
            if let job { try? await store.failJob(job.key, reason: reason) }
        } else {
            reason = "\(JobError.Code.failedRepeatedly): \(error)"
        }
        await park(delivery, jobID: job?.id, reason: reason, consumer: consumer, logger: logger)
    }

    /// Registers a job and plans it; the caller holds its planning claim. Returns the event to report, if any.
    private func registerAndPlan(_ item: SmallJobQueue.Item, logger: Logger) async throws -> JobEvent? {
        let job = item.job
        switch try await store.register(job, spec: item.spec, publishedAt: item.publishedAt) {
        case .scheduled:
            logger.info("job scheduled")
            return .scheduled(app: job.app, id: job.id)
        case .duplicate(let state):
            logger.info("job already finished, not sent again", metadata: ["state": "\(state.rawValue)"])
            return .duplicate(app: job.app, id: job.id, state: state)
        case .plan(let cursor, let nextSeq, let planned):
            let finished = try await planner.plan(
                job, cursor: cursor, nextSeq: nextSeq, planned: planned, redelivered: item.delivery.redelivered)
            guard let finished else { return nil }
            logger.info("job finished", metadata: ["state": "\(finished.rawValue)"])
            return .finished(app: job.app, id: job.id, state: finished)
        }
    }

    /// Delivers a group of small jobs: claims the new ones, sends them all and writes each one's row once, in one
    /// transaction (`Store.claimSmallJobs`); finishes the exceptions; then acknowledges each. Ids that exist
    /// already take the one-by-one path, after the group.
    ///
    /// Once the group was sent, nothing sends it again: rows the claim's transaction could not write are written
    /// afterwards (held through an outage), and what still fails is parked with its reason.
    private func deliver(_ group: [SmallJobQueue.Item], consumer: AMQPConsumer) async {
        var rest: [SmallJobQueue.Item] = []
        let claim: SmallJobClaim<SentGroup>
        do {
            claim = try await store.claimSmallJobs(group.map(\.job.key)) { claimed in
                // A claimed job is delivered here once; a second message with the same app and id waits for the
                // one-by-one path.
                var fast: [SmallJobQueue.Item] = []
                var others: [SmallJobQueue.Item] = []
                var taken = Set<JobKey>()
                for item in group {
                    let key = item.job.key
                    if claimed.contains(key) && taken.insert(key).inserted {
                        fast.append(item)
                    } else {
                        others.append(item)
                    }
                }
                guard !fast.isEmpty else { return (SentGroup(fast: fast, others: others), []) }
                let sent = try await deliverer.sendSmallJobs(fast)
                return (SentGroup(fast: fast, others: others, sent: sent), sent.rows)
            }
        } catch {
            // Sending failed part-way (a retry batch could not be published): what was sent is not sent again.
            for item in group {
                await fail(
                    item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                    logger: logger)
            }
            return
        }
        switch claim {
        case .notClaimed(let error):
            // Whatever went wrong, one by one each job fails (and is held through an outage) alone.
            logger.warning(
                "a group of small jobs could not be claimed, taking them one by one", metadata: ["error": "\(error)"])
            rest = group
        case .delivered(let group):
            rest = group.others
            await settle(group, consumer: consumer)
        case .deliveredNotWritten(let group, let rows, let error):
            rest = group.others
            logger.warning(
                "a sent group's rows were not written, writing them again", metadata: ["error": "\(error)"])
            let parked = await writeAlone(rows, of: group.fast, consumer: consumer)
            var written = group
            written.fast.removeAll { parked.contains($0.job.id) }
            written.sent.rows.removeAll { parked.contains($0.id) }
            written.sent.continuing.removeAll { parked.contains($0.key.job) }
            await settle(written, consumer: consumer)
        }
        // Duplicates, ids the API enqueued and redeliveries: the one-by-one path knows about each.
        await withDiscardingTaskGroup { tasks in
            for item in rest {
                tasks.addTask {
                    var logger = self.logger
                    logger[metadataKey: "job"] = "\(item.job.id)"
                    await process(item, consumer: consumer, logger: logger)
                }
            }
        }
    }

    /// A claimed group: the jobs it sent, those left to the one-by-one path, and what was sent.
    struct SentGroup: Sendable {
        var fast: [SmallJobQueue.Item]
        var others: [SmallJobQueue.Item]
        var sent = BatchDeliverer.SentSmallJobs()
    }

    /// Writes the rows of a sent group outside its claim (the claim's transaction rolled back): all in one
    /// statement, held through an outage; if that fails for good, row by row, so that only the job whose row is
    /// refused is parked. Returns the ids parked.
    private func writeAlone(_ rows: [SmallJobRow], of items: [SmallJobQueue.Item], consumer: AMQPConsumer) async
        -> Set<String>
    {
        do {
            try await outages.untilDone("writing a sent group") { try await store.writeSmallJobs(rows) }
            return []
        } catch {
            logger.warning("writing the group's rows one by one", metadata: ["error": "\(error)"])
        }
        var parked = Set<String>()
        for row in rows {
            do {
                try await outages.untilDone("writing a sent job") { try await store.writeSmallJobs([row]) }
            } catch {
                parked.insert(row.id)
                for item in items where item.job.id == row.id {
                    await fail(
                        item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                        logger: logger)
                }
            }
        }
        return parked
    }

    /// Finishes a sent group whose rows are written (dead tokens, failures, retries, stops) and acknowledges it.
    private func settle(_ group: SentGroup, consumer: AMQPConsumer) async {
        let outcomes: [JobKey: BatchDeliverer.Outcome]
        do {
            outcomes = try await outages.untilDone("finishing a group of small jobs") {
                try await deliverer.finishSmallJobs(group.sent)
            }
        } catch {
            for item in group.fast {
                await fail(
                    item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                    logger: logger)
            }
            return
        }
        try? await consumer.ack(group.fast.lazy.map(\.delivery))
        if let onJobHandled = configuration.onJobHandled {
            for item in group.fast {
                if case .completed(let finished?) = outcomes[item.job.key] {
                    onJobHandled(.finished(app: item.job.app, id: item.job.id, state: finished))
                }
            }
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

/// Handles messages from `herald.batches` (planned batches and retries coming back from the delay queues).
struct BatchConsumer: Sendable {
    let configuration: WorkerConfiguration
    let deliverer: BatchDeliverer
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger

    var outages: OutageWaiter { deliverer.outages }

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        var batch: BatchMessage
        do {
            batch = try Intake(configuration: configuration).batch(delivery)
        } catch {
            await park(delivery, reason: error.description, consumer: consumer)
            return
        }
        metrics.inFlightBatches.increment(by: 1)
        defer { metrics.inFlightBatches.decrement(by: 1) }
        let outcome: BatchDeliverer.Outcome
        do {
            // Held through a database outage until it is delivered; a failure after the send is not retried here
            // (`SentButNotSettled`): the deliverer already held its writes as long as it could.
            outcome = try await outages.untilDone("delivering a batch") {
                if batch.app == nil {
                    // Published before job ids were scoped by app (schemas/007): its job is the only one with its id.
                    batch.app = try await deliverer.store.onlyApp(ofJob: batch.job)
                }
                guard batch.app != nil else { return .unknownJob }
                return try await deliverer.deliver(batch)
            }
        } catch {
            if FailureKind.handBack(error) {
                logger.notice("shutting down, handing the batch back", metadata: ["batch": "\(batch.key)"])
                try? await consumer.nack(delivery, requeue: true)
                return
            }
            logger.error("batch could not be completed", metadata: ["batch": "\(batch.key)", "error": "\(error)"])
            let reason = FailureKind(error) == .permanent ? "\(error)" : "\(JobError.Code.failedRepeatedly): \(error)"
            await park(delivery, reason: reason, consumer: consumer)
            return
        }
        guard (try? await consumer.ack(delivery)) != nil else { return }
        switch outcome {
        case .completed(let finished):
            configuration.onJobHandled?(.batchCompleted(batch.key))
            if let finished {
                configuration.onJobHandled?(.finished(app: batch.key.app, id: batch.job, state: finished))
            }
        case .alreadyDone, .skipped:
            break
        case .unknownJob:
            logger.warning("batch of an unknown job dropped", metadata: ["batch": "\(batch.key)"])
        }
    }

    private func park(_ delivery: AMQPDelivery, reason: String, consumer: AMQPConsumer) async {
        logger.warning("batch parked", metadata: ["reason": "\(reason)"])
        do {
            try await outages.untilDone("parking a batch") {
                try await parking.park(
                    delivery.body, properties: delivery.properties, reason: reason, attempts: 1,
                    origin: configuration.topology.batches)
            }
            try await consumer.ack(delivery)
            configuration.onJobHandled?(.parked(id: nil, reason: reason))
        } catch {
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}
