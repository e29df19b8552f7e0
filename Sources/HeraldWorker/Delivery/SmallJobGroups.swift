import APNSCore
import APNSTransport
import Foundation
import HeraldCore
import HeraldStore

extension BatchDeliverer {
    // MARK: Small jobs in groups

    /// The one batch (seq 0, attempt 1) of a small job claimed by `Store.claimSmallJobs`: its listed tokens. Only
    /// its key is used (a retry or park lists the failed tokens itself).
    static func smallJobBatch(_ job: PreparedJob) -> BatchMessage {
        BatchMessage(app: job.app, job: job.id, seq: 0, attempt: 1, tokens: [])
    }

    /// What `sendSmallJobs` did, for `finishSmallJobs` once the group's rows are committed.
    struct SentSmallJobs: Sendable {
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

    /// Sends many small jobs at once — every notification of the group in flight together (bounded by
    /// `sendConcurrency`) — and returns each job's row. Runs inside the group's claim: it touches no database.
    ///
    /// Only for jobs whose payload is the same for every device and that have no throttle (the caller checks).
    func sendSmallJobs(_ jobs: [SmallJobQueue.Item]) async throws -> SentSmallJobs {
        var sent = SentSmallJobs()
        var sendable: [(SmallJobQueue.Item, APNSClient, RequestList)] = []
        var tally: [Tally: Int] = [:]
        let clock = configuration.clock.unixTime()
        let now = Int64(clock)
        // A message without a timestamp counts as published now (ms since 1970).
        let receivedAt = Int64(clock * 1000)
        func row(_ small: SmallJobQueue.Item, done: WriteBack?) -> SmallJobRow {
            SmallJobRow(
                id: small.job.id, app: small.job.app, spec: small.spec, publishedAt: small.publishedAt ?? receivedAt,
                tokenCount: small.tokens.count, done: done)
        }
        // Each app's clients are leased until the group is sent (a reload shuts replaced clients down after).
        var leases: [String: APNSClients.Lease] = [:]
        defer { for lease in leases.values { clients.release(lease) } }
        for small in jobs {
            let job = small.job
            if leases[job.app] == nil, let lease = clients.lease(job.app) { leases[job.app] = lease }
            guard let lease = leases[job.app] else {
                sent.appGone.append(job)
                sent.rows.append(row(small, done: nil))
                continue
            }
            if let expiration = job.template.expiration, expiration != 0, expiration < now {
                var writeBack = Self.firstWriteBack(of: job, devices: small.tokens.count)
                writeBack.expired = small.tokens.count
                tally[Tally(outcome: .expired, reason: ""), default: 0] += small.tokens.count
                sent.rows.append(row(small, done: writeBack))
                continue
            }
            sendable.append(
                (
                    small, lease.clients.standard,
                    RequestList(job: job, bundleID: lease.app.topic, tokens: small.tokens, payloads: nil)
                ))
        }

        // Every job's notifications at once, one transport batch per APNs client, up to `sendConcurrency` in flight
        // in all.
        var byClient: [ObjectIdentifier: (client: APNSClient, jobs: [Int])] = [:]
        for (number, (_, client, _)) in sendable.enumerated() {
            byClient[ObjectIdentifier(client), default: (client, [])].jobs.append(number)
        }
        let sender = {
            var sender = self.sender
            sender.concurrency = max(1, configuration.sendConcurrency / max(1, byClient.count))
            return sender
        }()
        let results = await withTaskGroup(of: [(Int, [DeviceResult])].self) { group in
            for (client, numbers) in byClient.values {
                let shares = numbers.map { number in
                    let (small, _, requests) = sendable[number]
                    return Sender.Share(
                        requests: requests,
                        range: 0..<requests.count,
                        stop: StopFlag(job: small.job.key, registry: stoppedJobs),
                        publishedAt: small.publishedAt ?? receivedAt
                    )
                }
                group.addTask {
                    let results = await sender.sendProbingFirst(shares, through: client)
                    return Array(zip(numbers, results))
                }
            }
            var collected = [[DeviceResult]](repeating: [], count: sendable.count)
            for await done in group {
                for (number, result) in done { collected[number] = result }
            }
            return collected
        }

        for ((small, _, _), result) in zip(sendable, results) {
            let batch = Self.smallJobBatch(small.job)
            var writeBack = Self.firstWriteBack(of: small.job, devices: small.tokens.count)
            let (retry, stop) = try await settle(
                result, batch: batch, of: small.job, into: &writeBack, tally: &tally, reads: nil)
            if let stop {
                sent.stopped.append((small.job, stop))
            }
            if let stop, !stop.isBreaker {
                // The job's error names the reason; its devices count as failed without a record each.
                writeBack.rejectedTokens += writeBack.failures.count
                writeBack.failures = []
            }
            if stop == nil && retry == nil && writeBack.prunes.isEmpty && writeBack.failures.isEmpty {
                sent.rows.append(row(small, done: writeBack))
            } else {
                sent.rows.append(row(small, done: nil))
                sent.continuing.append(BatchCompletion(key: batch.key, writeBack: writeBack, retry: retry))
            }
        }
        record(tally)
        return sent
    }

    /// Finishes what `sendSmallJobs` left running, once the group's rows are committed: fails (and parks once) the
    /// jobs APNs rejected as a whole and those whose app is gone, then completes the rest. Returns each job's
    /// outcome (a job written done has one only when `onJobHandled` is set).
    func finishSmallJobs(_ sent: SentSmallJobs) async throws -> [JobKey: Outcome] {
        var outcomes: [JobKey: Outcome] = [:]
        // The rows written done; counted once for the group: each counter lookup hashes its labels. Their outcomes
        // are only for the `onJobHandled` hook, so they are not built without it.
        var done = 0
        let wantsOutcomes = configuration.onJobHandled != nil
        for row in sent.rows where row.done != nil {
            if wantsOutcomes { outcomes[JobKey(app: row.app, id: row.id)] = .completed(jobFinished: .done) }
            done += 1
        }
        metrics.batchesCompleted.increment(by: done)
        metrics.jobFinished(state: JobState.done.rawValue, count: done)
        for job in sent.appGone {
            let stopped = try await stopJob(
                job, reason: "app \(job.app) is no longer in the apps file", batch: Self.smallJobBatch(job))
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
            if let finished { metrics.jobFinished(state: finished.rawValue) }
            outcomes[completion.key.jobKey] = .completed(jobFinished: finished)
        }
        for (job, _) in sent.stopped {
            outcomes[job.key] = .completed(jobFinished: stoppedHere.contains(job.key) ? .failed : nil)
        }
        return outcomes
    }

    /// The write-back of a job's first batch: its devices, and the listed entries that were not tokens (each failed
    /// alone, counted once, with the first batch).
    static func firstWriteBack(of job: PreparedJob, devices: Int) -> WriteBack {
        var writeBack = WriteBack(jobID: job.id, app: job.app)
        writeBack.rejectedTokens = job.invalidTokenCount
        writeBack.targeted = devices + job.invalidTokenCount
        return writeBack
    }
}
