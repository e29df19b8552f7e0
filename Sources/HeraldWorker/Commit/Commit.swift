import APNSCore
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ

/// How a unit of a delivery run ended.
enum DeliveryOutcome: Sendable, Equatable {
    /// Delivered and written back; the job's final state if this finished it.
    case completed(jobFinished: JobState?)
    /// Already done by an earlier delivery: nothing sent.
    case alreadyDone
    /// The job was cancelled or failed: nothing sent.
    case skipped(JobState)
    /// The job is not known (never registered, or purged after its retention).
    case unknownJob
    /// The job is throttled and the batch's turn is further off than the throttle window: nothing sent; the batch
    /// goes back to a delay queue for about this long.
    case deferred(Duration)
}

/// Commit: carries out a unit's settlement plan — the retry batch published or the devices parked, the job stopped
/// — then writes the unit's write-back and completion in one transaction (`Store.complete`, where
/// `herald_job_completes` decides whether the job is done). A group of small jobs writes its rows in its claim
/// (`GroupCommit`) and its exceptions through `finishGroup`.
struct Commit: Sendable {
    let store: any CommitStore
    /// Where retry batches go, and what is parked.
    let publisher: any MessagePublishing
    let configuration: WorkerConfiguration
    let metrics: WorkerMetrics
    let logger: Logger
    /// Jobs this worker has seen rejected as a whole, so that its other batches of them stop too.
    let stoppedJobs: StoppedJobs

    /// Holds writes through an outage of the database.
    var outages: OutageWaiter {
        let store = self.store
        return OutageWaiter(
            answers: { await store.databaseAnswers(within: $0) }, logger: logger, onEvent: configuration.onJobHandled,
            clock: configuration.clock)
    }

    /// A planned batch's end once its notifications are out: its plan carried out, the job stopped first if the
    /// plan says so (so that completing its last batch cannot mark it done), then its completion written. Each
    /// write is held through an outage.
    func completeBatch(_ batch: BatchMessage, job: PreparedJob, plan: SettlementPlan, writeBack: WriteBack)
        async throws -> DeliveryOutcome
    {
        var writeBack = writeBack
        let retry = try await carryOut(plan, of: batch, job: job, into: &writeBack)
        record(plan.tally)
        guard let stop = plan.stop else {
            return try await outages.untilDone("completing a batch") {
                try await finish(batch, writeBack: writeBack, retry: retry)
            }
        }
        let stopped = try await outages.untilDone("stopping a job") {
            try await stop.isBreaker
                ? stopForPruneBreaker(job, reason: stop.reason, batch: nil)
                : stopJob(job, reason: stop.reason, batch: nil)
        }
        _ = try await outages.untilDone("completing a batch") {
            try await finish(batch, writeBack: writeBack, retry: nil)
        }
        return .completed(jobFinished: stopped ? .failed : nil)
    }

    /// Carries out a plan's effects for `batch`: publishes its transient failures to the retry queue or parks them,
    /// adds the plan to `writeBack` and logs the failures. Returns the retry batch's key.
    func carryOut(_ plan: SettlementPlan, of batch: BatchMessage, job: PreparedJob, into writeBack: inout WriteBack)
        async throws -> BatchKey?
    {
        var retry: BatchKey? = nil
        switch plan.next {
        case .nothing:
            break
        case .retry(let attempt):
            retry = try await publishRetry(
                plan, of: batch, attempt: attempt, priority: job.brokerPriority(bulk: batch.isBulk))
        case .park:
            try await park(plan, of: batch)
        }
        writeBack.add(plan)
        logFailures(writeBack, batch: batch)
        return retry
    }

    /// Publishes the plan's transient failures to the retry queue after `attempt - 1`, at the job's broker priority
    /// (kept when the retry queue returns them to the batches queue).
    private func publishRetry(_ plan: SettlementPlan, of batch: BatchMessage, attempt: Int, priority: UInt8)
        async throws -> BatchKey
    {
        let topology = configuration.topology
        // After a provider's `Retry-After`: not delivered before it has passed, whatever the retry queue's delay.
        let notBefore = plan.retryAfter.map { configuration.clock.unixMilliseconds + Topology.milliseconds($0) }
        let retry = BatchMessage(
            app: batch.app, job: batch.job, seq: batch.seq, attempt: attempt, tokens: plan.transient.map(\.hex),
            notBefore: notBefore)
        var properties = AMQPProperties(
            contentType: "application/json", messageID: "\(retry.key)", priority: priority)
        properties.headers[ParkingHeader.attempts] = .int(Int64(batch.attempt))
        properties.headers[ParkingHeader.reason] = .string(plan.transientReasons)
        let body = Array(try JSONEncoder().encode(retry))
        try await outages.untilDone("publishing a retry batch") {
            try await publisher.publish(
                body, exchange: "", routingKey: topology.retryQueue(after: batch.attempt), properties: properties,
                mandatory: true)
        }
        metrics.retriesQueued.increment(by: plan.transient.count)
        return retry.key
    }

    /// Parks the plan's transient failures after the batch's last attempt.
    private func park(_ plan: SettlementPlan, of batch: BatchMessage) async throws {
        let (topology, clock) = (configuration.topology, configuration.clock)
        let parked = BatchMessage(
            app: batch.app, job: batch.job, seq: batch.seq, attempt: batch.attempt, tokens: plan.transient.map(\.hex))
        let body = Array(try JSONEncoder().encode(parked))
        try await outages.untilDone("parking a batch's devices") {
            try await Parking(publisher: publisher, topology: topology, clock: clock).park(
                body,
                properties: AMQPProperties(contentType: "application/json", messageID: "\(parked.key)"),
                reason: "transient failures after \(batch.attempt) attempts: \(plan.transientReasons)",
                attempts: batch.attempt,
                origin: topology.batches
            )
        }
        metrics.devicesParked.increment(by: plan.transient.count)
    }

    /// Writes the batch's write-back and completion in one transaction; the job's final state if this finished it.
    func finish(_ batch: BatchMessage, writeBack: WriteBack, retry: BatchKey?) async throws -> DeliveryOutcome {
        guard let result = try await store.complete(batch.key, with: writeBack, retry: retry) else {
            metrics.batchesDuplicate.increment()
            return .alreadyDone
        }
        metrics.batchesCompleted.increment()
        return .completed(jobFinished: result.jobFinished)
    }

    /// A batch of a job that was stopped or cancelled: completed without sending, with nothing to write back.
    /// Returns whether this completed it (false: an earlier delivery did).
    func skip(_ batch: BatchMessage) async throws -> Bool {
        try await store.complete(batch.key, with: WriteBack(jobID: batch.job, app: batch.key.app), retry: nil) != nil
    }

    /// Stops a job that can never succeed: marks it failed and parks its spec once, whichever worker sees it first.
    /// With `batch`, that batch is completed without sending. Returns true for the one caller that stopped it.
    func stopJob(_ job: PreparedJob, reason: String, batch: BatchMessage?) async throws -> Bool {
        if let batch { _ = try await skip(batch) }
        guard try await store.failJob(job.key, reason: reason) else { return false }
        logger.warning("job stopped", metadata: ["job": "\(job.id)", "reason": "\(reason)"])
        try await Parking(publisher: publisher, topology: configuration.topology, clock: configuration.clock).park(
            try job.spec.jsonBytes(),
            properties: AMQPProperties(contentType: "application/json", messageID: job.id),
            reason: reason,
            attempts: 1,
            origin: configuration.topology.jobs
        )
        metrics.jobsParked.increment()
        return true
    }

    /// Stops a job the breaker tripped for: failed with the reason (and parked once), counted, and announced.
    func stopForPruneBreaker(_ job: PreparedJob, reason: String, batch: BatchMessage?) async throws -> Bool {
        stoppedJobs.insert(job.key)
        guard try await stopJob(job, reason: reason, batch: batch) else { return false }
        metrics.pruneBreakerTrips.increment()
        configuration.onJobHandled?(.pruneBreakerTripped(app: job.app, id: job.id))
        return true
    }

    /// Counts outcomes once per (outcome, reason) for a whole unit or group, not per notification.
    func record(_ tally: [Tally: Int]) {
        for (key, count) in tally { metrics.record(outcome: key.outcome.rawValue, reason: key.reason, count: count) }
    }

    /// The most failed devices of one batch logged one by one; the rest are counted in one line.
    static let failuresLoggedPerBatch = 20

    /// Logs a batch's failed devices (notice) and pruned devices (debug) with the `apns-id` each notification
    /// carried, never the token: a re-send of the same notification carries the same id, so these lines match
    /// Apple's delivery log and the `apns_id` of `delivery_failures` and `dead_tokens`.
    func logFailures(_ writeBack: WriteBack, batch: BatchMessage) {
        guard !writeBack.failures.isEmpty || !writeBack.prunes.isEmpty else { return }
        let ids = NotificationID(app: writeBack.app, job: writeBack.jobID)
        let job = "\(batch.key.jobKey)"
        for failure in writeBack.failures.prefix(Self.failuresLoggedPerBatch) {
            var metadata: Logger.Metadata = [
                "job": "\(job)", "apns-id": "\(ids.id(for: failure.token))", "reason": "\(failure.reason)",
            ]
            if let status = failure.status { metadata["status"] = "\(status)" }
            logger.notice("notification failed", metadata: metadata)
        }
        if writeBack.failures.count > Self.failuresLoggedPerBatch {
            logger.notice(
                "more notifications failed",
                metadata: [
                    "job": "\(job)", "batch": "\(batch.key)",
                    "failed": "\(writeBack.failures.count - Self.failuresLoggedPerBatch)",
                ])
        }
        if logger.logLevel <= .debug {
            for prune in writeBack.prunes {
                logger.debug(
                    "device pruned",
                    metadata: ["job": "\(job)", "apns-id": "\(ids.id(for: prune.token))", "reason": "\(prune.reason)"])
            }
        }
    }
}

extension Commit {
    /// Commits a slice of a batch still being delivered (`DeliveryRun.deliver`): its write-back, how far the batch
    /// got, and its transient failures held for the batch's retry; held through an outage. Returns false if the
    /// batch is no longer pending (another delivery completed it): its sender stops.
    func commitSlice(
        _ batch: BatchMessage, plan: SettlementPlan, writeBack: WriteBack, settled: Int, through: String?,
        held: [DeviceToken]
    ) async throws -> Bool {
        let slice = SliceCommit(
            key: batch.key, writeBack: writeBack, settled: settled, settledThrough: through, held: held.map(\.hex))
        let committed = try await outages.untilDone("committing a batch's slice") {
            try await store.commitSlice(slice)
        }
        if committed {
            record(plan.tally)
            logFailures(writeBack, batch: batch)
        }
        return committed
    }
}
