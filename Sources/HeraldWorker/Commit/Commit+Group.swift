import HeraldCore
import HeraldStore

/// What a group of small jobs came to once sent (`DeliveryRun.sendGroup`), for its claim to write and for
/// `Commit.finishGroup` to finish once the group's rows are committed.
struct SentGroup: Sendable {
    /// One row per job: done with its counts, or running for the jobs below.
    var rows: [SmallJobRow] = []
    /// Completions that go on through `Store.completeSmallJobs`: dead tokens, failures to record, a retry, and
    /// the counts of the jobs stopped.
    var continuing: [BatchCompletion] = []
    /// Jobs APNs rejected as a whole or the prune breaker stopped, with the reason.
    var stopped: [(PreparedJob, JobStop)] = []
    /// Jobs whose app left the apps file: not sent.
    var appGone: [PreparedJob] = []
}

extension Commit {
    /// Finishes what a group's send left running, once the group's rows are committed: fails (and parks once) the
    /// jobs APNs rejected as a whole and those whose app is gone, then completes the rest. Returns each job's
    /// outcome (a job written done has one only when `onJobHandled` is set).
    func finishGroup(_ sent: SentGroup) async throws -> [JobKey: DeliveryOutcome] {
        var outcomes: [JobKey: DeliveryOutcome] = [:]
        // The rows written done; counted once for the group: each counter lookup hashes its labels. Their outcomes
        // are only for the `onJobHandled` hook, so they are not built without it.
        var done = 0
        let wantsOutcomes = configuration.onJobHandled != nil
        for row in sent.rows where row.done != nil {
            if wantsOutcomes { outcomes[JobKey(app: row.app, id: row.id)] = .completed(jobFinished: .done) }
            done += 1
        }
        metrics.batchesCompleted.increment(by: done)
        for job in sent.appGone {
            let stopped = try await stopJob(
                job, reason: DeliveryUnit.appGone(job), batch: DeliveryUnit.firstBatch(of: job))
            outcomes[job.key] = stopped ? .completed(jobFinished: .failed) : .skipped(.failed)
        }
        // A job APNs rejected as a whole is failed (and parked once) first, so that its completion, which still
        // writes its counts, does not mark it done.
        var stoppedHere = Set<JobKey>()
        for (job, stop) in sent.stopped
        where try await stop.isBreaker
            ? stopForPruneBreaker(job, reason: stop.reason, batch: nil)
            : stopJob(job, reason: stop.reason, batch: nil)
        {
            stoppedHere.insert(job.key)
        }
        guard !sent.continuing.isEmpty else { return outcomes }
        let completed = try await store.completeSmallJobs(sent.continuing)
        for completion in sent.continuing {
            guard completed.pruned[completion.key] != nil else {
                metrics.batchesDuplicate.increment()
                outcomes[completion.key.jobKey] = .alreadyDone
                continue
            }
            metrics.batchesCompleted.increment()
            let finished = completed.finished[completion.key.jobKey]
            outcomes[completion.key.jobKey] = .completed(jobFinished: finished)
        }
        for (job, _) in sent.stopped {
            outcomes[job.key] = .completed(jobFinished: stoppedHere.contains(job.key) ? .failed : nil)
        }
        return outcomes
    }
}
