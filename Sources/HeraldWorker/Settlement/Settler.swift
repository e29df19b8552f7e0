import APNSCore
import HeraldCore
import HeraldStore

/// The database reads the prune breaker makes for a planned batch with a suspect answer: the job's counts so far,
/// and which of the batch's devices are unproven. Nil for a group of small jobs, which touches no database while it
/// holds its claim: their breaker judges each job's answers alone, and their deliveries are not recorded.
struct BreakerReads: Sendable {
    var prior: @Sendable () async throws -> (answers: Int, suspect: Int)
    var unproven: @Sendable ([DeviceToken]) async throws -> Set<String>
}

/// Settlement of one unit's answers: asks the prune breaker (making its `reads` when given and the unit has a
/// suspect answer), then plans (`Settlement.plan`). Returns the plan, whose effects (a retry batch, parked devices,
/// a job to stop) are values that `Commit` carries out.
struct Settler: Sendable {
    var breaker: PruneBreaker
    /// The attempt after which transient failures are parked instead of retried.
    var maximumAttempts: Int
    /// Jobs this worker already stopped: their suspect answers are held, never pruned.
    let stoppedJobs: StoppedJobs

    func settle(_ results: [DeviceResult], batch: BatchMessage, reads: BreakerReads?) async throws -> SettlementPlan {
        let trip = try await pruneBreakerTrip(results, job: batch.key.jobKey, reads: reads)
        return Settlement.plan(
            results, attempt: batch.attempt, maximumAttempts: maximumAttempts, holdPrunes: trip.holdPrunes,
            breakerStop: trip.reason, unproven: trip.unproven, recordsDeliveries: reads != nil)
    }

    /// Whether a unit's suspect answers must not be pruned: the breaker trips on the unit alone, on the job's counts
    /// so far plus the unit's (`reads.prior`, read only when the unit has a suspect answer), or the job is one this
    /// worker already stopped. Returns the stop reason if the breaker trips here (nil when it does not, or when the
    /// job was already stopped), and the unit's unproven devices.
    ///
    /// Only evidence a register-only key cannot forge counts: a unit with a suspect answer reads which of its devices
    /// are unproven (`reads.unproven`: registered by a register-only key and never delivered to), and their answers
    /// are left out. So made-up tokens registered with an app's embedded key neither stop a job nor hold its prunes:
    /// they are pruned, and the job goes on to the real devices.
    func pruneBreakerTrip(_ results: [DeviceResult], job: JobKey, reads: BreakerReads?) async throws
        -> (holdPrunes: Bool, reason: String?, unproven: Set<String>)
    {
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
        let counts = PruneBreaker.Counts(evidence.map(\.disposition))
        guard counts.suspect > 0 else { return (false, nil, unproven) }
        if breaker.trips(counts) { return (true, PruneBreaker.reason(counts), unproven) }
        guard let reads else { return (false, nil, unproven) }
        let before = try await reads.prior()
        var sum = counts
        sum.answers += before.answers
        sum.earlier = before.suspect
        return breaker.trips(sum) ? (true, PruneBreaker.reason(sum), unproven) : (false, nil, unproven)
    }
}
