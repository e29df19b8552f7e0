import APNSCore
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ

/// The database reads the prune breaker makes for a planned batch with a suspect answer: the job's counts so far,
/// and which of the batch's devices are unproven. Nil for a group of small jobs, which touches no database while it
/// holds its claim: their breaker judges each job's answers alone, and their deliveries are not recorded.
struct BreakerReads: Sendable {
    var prior: @Sendable () async throws -> (answers: Int, suspect: Int)
    var unproven: @Sendable ([DeviceToken]) async throws -> Set<String>
}

/// Commit: carries out a batch's settlement plan — the retry batch published or the devices parked, the plan added
/// to the write-back — then writes the write-back and the batch's completion in one transaction
/// (`Store.complete`, where `herald_job_completes` decides whether the job is done). Small-job groups commit
/// through `GroupCommit`, and their exceptions through `Store.completeSmallJobs` and this same `Store.complete`.
extension BatchDeliverer {
    /// Settles a batch's results: asks the prune breaker (making its `reads` when given and the batch has a
    /// suspect answer), plans (`Settlement`), publishes the retry batch or parks the devices, adds the plan to
    /// `writeBack` and logs the failures. Returns the retry batch's key and why the job must stop, if it must.
    func settle(
        _ results: [DeviceResult],
        batch: BatchMessage,
        of job: PreparedJob,
        into writeBack: inout WriteBack,
        tally: inout [Tally: Int],
        reads: BreakerReads?
    ) async throws -> (retry: BatchKey?, stop: JobStop?) {
        let breaker = try await pruneBreakerTrip(results, job: batch.key.jobKey, reads: reads)
        let plan = Settlement.plan(
            results, attempt: batch.attempt, maximumAttempts: configuration.maximumBatchAttempts,
            holdPrunes: breaker.holdPrunes, breakerStop: breaker.reason, unproven: breaker.unproven,
            recordsDeliveries: reads != nil)
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
        tally.merge(plan.tally, uniquingKeysWith: +)
        logFailures(writeBack, batch: batch)
        return (retry, plan.stop)
    }

    /// Publishes the plan's transient failures to the retry queue after `attempt - 1`, at the job's broker priority
    /// (kept when the retry queue returns them to the batches queue).
    private func publishRetry(_ plan: SettlementPlan, of batch: BatchMessage, attempt: Int, priority: UInt8)
        async throws -> BatchKey
    {
        let topology = configuration.topology
        let retry = BatchMessage(
            app: batch.app, job: batch.job, seq: batch.seq, attempt: attempt, tokens: plan.transient.map(\.hex))
        var properties = AMQPProperties(
            contentType: "application/json", messageID: "\(retry.key)", priority: priority)
        properties.headers[ParkingHeader.attempts] = .int(Int64(batch.attempt))
        properties.headers[ParkingHeader.reason] = .string(plan.transientReasons)
        let body = Array(try JSONEncoder().encode(retry))
        try await outages.untilDone("publishing a retry batch") {
            try await publisher.publish(
                body, routingKey: topology.retryQueue(after: batch.attempt), properties: properties, mandatory: true)
        }
        metrics.retriesQueued.increment(by: plan.transient.count)
        return retry.key
    }

    /// Parks the plan's transient failures after the batch's last attempt.
    private func park(_ plan: SettlementPlan, of batch: BatchMessage) async throws {
        let topology = configuration.topology
        let parked = BatchMessage(
            app: batch.app, job: batch.job, seq: batch.seq, attempt: batch.attempt, tokens: plan.transient.map(\.hex))
        let body = Array(try JSONEncoder().encode(parked))
        try await outages.untilDone("parking a batch's devices") {
            try await Parking(publisher: publisher, topology: topology).park(
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
    func finish(_ batch: BatchMessage, writeBack: WriteBack, retry: BatchKey?) async throws -> Outcome {
        guard let result = try await store.complete(batch.key, with: writeBack, retry: retry) else {
            metrics.batchesDuplicate.increment()
            return .alreadyDone
        }
        metrics.batchesCompleted.increment()
        if let state = result.jobFinished { metrics.jobFinished(state: state.rawValue) }
        return .completed(jobFinished: result.jobFinished)
    }

    /// Stops a job that can never succeed: marks it failed and parks its spec once, whichever worker sees it first.
    /// With `batch`, that batch is completed without sending. Returns true for the one caller that stopped it.
    func stopJob(_ job: PreparedJob, reason: String, batch: BatchMessage?) async throws -> Bool {
        if let batch {
            _ = try await store.complete(batch.key, with: WriteBack(jobID: job.id, app: job.app), retry: nil)
        }
        guard try await store.failJob(job.key, reason: reason) else { return false }
        logger.warning("job stopped", metadata: ["job": "\(job.id)", "reason": "\(reason)"])
        try await Parking(publisher: publisher, topology: configuration.topology).park(
            Array(try JSONEncoder().encode(job.spec)),
            properties: AMQPProperties(contentType: "application/json", messageID: job.id),
            reason: reason,
            attempts: 1,
            origin: configuration.topology.jobs
        )
        metrics.jobsParked.increment()
        metrics.jobFinished(state: JobState.failed.rawValue)
        return true
    }

    /// Whether a batch's suspect answers must not be pruned: the breaker trips on the batch alone, on the job's
    /// counts so far plus the batch's (`reads.prior`, read only when the batch has a suspect answer), or the job is
    /// one this worker already stopped. Returns the stop reason if the breaker trips here (nil when it does not, or
    /// when the job was already stopped), and the batch's unproven devices.
    ///
    /// Only evidence a register-only key cannot forge counts: a batch with a suspect answer reads which of its
    /// devices are unproven (`reads.unproven`: registered by a register-only key and never delivered to), and
    /// their answers are left out. So made-up tokens registered with an app's embedded key neither stop a job nor
    /// hold its prunes: they are pruned, and the job goes on to the real devices.
    func pruneBreakerTrip(
        _ results: [DeviceResult],
        job: JobKey,
        reads: BreakerReads?
    ) async throws -> (holdPrunes: Bool, reason: String?, unproven: Set<String>) {
        let anySuspect = results.contains { result in
            if case .prune(let reason, _) = result.disposition { return PruneBreaker.isSuspect(reason) }
            return false
        }
        guard anySuspect else { return (false, nil, []) }
        if stoppedJobs.contains(job) { return (true, nil, []) }
        let unproven = try await reads?.unproven(results.map(\.token)) ?? []
        let evidence = results.lazy.filter { result in
            if case .delivered = result.disposition { return true }
            return unproven.isEmpty || !unproven.contains(result.token.hex)
        }
        let batch = PruneBreaker.Counts(evidence.map(\.disposition))
        guard batch.suspect > 0 else { return (false, nil, unproven) }
        let breaker = configuration.pruneBreaker
        if breaker.trips(batch) { return (true, PruneBreaker.reason(batch), unproven) }
        guard let reads else { return (false, nil, unproven) }
        let before = try await reads.prior()
        var sum = batch
        sum.answers += before.answers
        sum.earlier = before.suspect
        return breaker.trips(sum) ? (true, PruneBreaker.reason(sum), unproven) : (false, nil, unproven)
    }

    /// Stops a job the breaker tripped for: failed with the reason (and parked once), counted, and announced.
    func stopForPruneBreaker(_ job: PreparedJob, reason: String, batch: BatchMessage?) async throws -> Bool {
        stoppedJobs.insert(job.key)
        guard try await stopJob(job, reason: reason, batch: batch) else { return false }
        metrics.pruneBreakerTrips.increment()
        configuration.onJobHandled?(.pruneBreakerTripped(app: job.app, id: job.id))
        return true
    }

    /// Counts outcomes once per (outcome, reason) for a whole batch or group, not per notification.
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
