import APNSCore
import APNSTransport
import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import Synchronization

/// Delivers one batch: reads its devices, sends each notification with bounded concurrency (and the job's
/// throttle), retries transient failures briefly in-process, sends what still fails to the next retry queue (or
/// parks it after the last attempt), and writes the results and the batch's completion in one transaction.
///
/// The caller acknowledges the batch message only after this returns.
struct BatchDeliverer: Sendable {
    let store: Store
    let clients: APNSClients
    let configuration: WorkerConfiguration
    let publisher: AMQPConnection
    let metrics: WorkerMetrics
    let logger: Logger
    /// Jobs this worker has seen rejected as a whole, so that its other batches of them stop too.
    let stoppedJobs: StoppedJobs

    /// How a batch ended.
    enum Outcome: Sendable, Equatable {
        /// Delivered and written back; the job's final state if this finished it.
        case completed(jobFinished: JobState?)
        /// Already done by an earlier delivery: nothing sent.
        case alreadyDone
        /// The job was cancelled or failed: nothing sent.
        case skipped(JobState)
        /// The job is not known (never registered, or purged after its retention).
        case unknownJob
    }

    func deliver(_ batch: BatchMessage) async throws -> Outcome {
        let start = try await store.beginBatch(batch.key)
        let spec: String
        let publishedAt: Int64
        let throttle: Int?
        switch start {
        case .alreadyDone:
            metrics.batchesDuplicate.increment()
            return .alreadyDone
        case .unknownJob:
            return .unknownJob
        case .jobStopped(let state):
            let finished = try await store.complete(
                batch.key, with: WriteBack(jobID: batch.job, app: batch.key.app), retry: nil)
            return finished == nil ? .alreadyDone : .skipped(state)
        case .deliver(let jobSpec, let published, let perSecond):
            spec = jobSpec
            publishedAt = published
            throttle = perSecond
        }

        var logger = self.logger
        logger[metadataKey: "app"] = "\(batch.key.app)"
        logger[metadataKey: "job"] = "\(batch.job)"
        logger[metadataKey: "batch"] = "\(batch.seq).\(batch.attempt)"
        let job = try PreparedJob.decode(Array(spec.utf8)) { batch.job }
        guard let app = configuration.apps.app(job.app), clients.client(for: job.app) != nil else {
            let stopped = try await stopJob(job, reason: "app \(job.app) is no longer in the apps file", batch: batch)
            return stopped ? .completed(jobFinished: .failed) : .skipped(.failed)
        }

        var writeBack = WriteBack(jobID: job.id, app: job.app)
        let devices = try await devices(of: batch, job: job, app: app)
        // Counters count devices, not attempts: a retry batch's devices were targeted by the attempt before it.
        writeBack.targeted = batch.attempt == 1 ? devices.count : 0
        if batch.seq == 0 && batch.attempt == 1 && batch.tokens != nil {
            // Entries of the job's token list that were not tokens fail alone; counted once, with the first batch.
            writeBack.rejectedTokens = job.invalidTokenCount
            writeBack.targeted += job.invalidTokenCount
        }

        let now = Int64(Date().timeIntervalSince1970)
        if let expiration = job.template.expiration, expiration != 0, expiration < now {
            writeBack.expired = devices.count
            metrics.record(outcome: "expired", reason: "", count: devices.count)
            return try await finish(batch, writeBack: writeBack, retry: nil)
        }

        var badges: [String: Int] = [:]
        if let increment = job.template.badgeIncrement {
            // Once per device per job: a retry or redelivery gets the badge the first delivery computed.
            badges = try await store.incrementBadges(job: job.key, tokens: devices.map(\.token), by: increment)
        }
        // Each device to the APNs environment it registered with, for an app that serves both; else all to one.
        var results: [(DeviceToken, Disposition, Int)] = []
        for (environment, share) in Self.byEnvironment(devices, app: app) {
            guard let client = clients.client(for: job.app, environment: environment) else { continue }
            let requests = makeRequests(for: share, job: job, bundleID: app.topic, badges: badges)
            results += try await send(
                requests, job: job, client: client, throttle: throttle, publishedAt: publishedAt)
        }

        // The notifications are out: from here each write is held through an outage and tried again alone, and a
        // failure that remains is `SentButNotSettled`, so nothing retries the batch from the start (sending again).
        do {
            var tally: [Tally: Int] = [:]
            let (retryKey, stop) = try await settle(
                results, batch: batch, into: &writeBack, tally: &tally,
                prior: {
                    try await outages.untilDone("reading a job's prune counts") {
                        try await store.pruneBreakerCounts(job.key)
                    }
                })
            record(tally)
            if let stop {
                // Failed first, so that completing its last batch cannot mark the job done.
                let stopped = try await outages.untilDone("stopping a job") {
                    try await stop.isBreaker
                        ? stopForPruneBreaker(job, reason: stop.reason, batch: nil)
                        : stopJob(job, reason: stop.reason, batch: nil)
                }
                _ = try await outages.untilDone("completing a batch") {
                    try await finish(batch, writeBack: writeBack, retry: nil)
                }
                return stopped ? .completed(jobFinished: .failed) : .completed(jobFinished: nil)
            }
            return try await outages.untilDone("completing a batch") {
                try await finish(batch, writeBack: writeBack, retry: retryKey)
            }
        } catch {
            throw SentButNotSettled(underlying: error)
        }
    }

    /// Holds writes through an outage of the database.
    var outages: OutageWaiter { OutageWaiter(store: store, logger: logger, onEvent: configuration.onJobHandled) }

    /// Turns a batch's send results into its write-back, sends the transient failures to the next retry queue (or
    /// parks them), and adds the outcomes to `tally`. Returns the retry batch's key, and why the job must stop if APNs
    /// rejected it as a whole or the prune breaker tripped (then nothing is retried). The breaker is asked before any
    /// prune is added (`prior`: the job's counts so far, for its cross-batch check).
    private func settle(
        _ results: [(DeviceToken, Disposition, Int)],
        batch: BatchMessage,
        into writeBack: inout WriteBack,
        tally: inout [Tally: Int],
        prior: (@Sendable () async throws -> (answers: Int, suspect: Int))?
    ) async throws -> (retry: BatchKey?, stop: JobStop?) {
        var transient: [(DeviceToken, String)] = []
        var jobFailure: APNSReason? = nil
        let breaker = try await pruneBreakerTrip(results, job: batch.key.jobKey, prior: prior)
        for (token, decided, _) in results {
            switch decided {
            case .delivered:
                writeBack.sent += 1
            case .prune(let reason, _) where PruneBreaker.isSuspect(reason) && breaker.holdPrunes:
                writeBack.suspectAnswers += 1
                writeBack.failures.append(.init(token: token, status: 400, reason: "\(reason) (not pruned: breaker)"))
                tally[Tally(outcome: "failed", reason: reason.rawValue), default: 0] += 1
            case .prune(let reason, let timestamp):
                if PruneBreaker.isSuspect(reason) { writeBack.suspectAnswers += 1 }
                writeBack.prunes.append(.init(token: token, reason: reason.rawValue, apnsTimestamp: timestamp))
                tally[Tally(outcome: "pruned", reason: reason.rawValue), default: 0] += 1
            case .failDevice(let reason):
                writeBack.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                tally[Tally(outcome: "failed", reason: reason.rawValue), default: 0] += 1
            case .exhausted(let reason), .retry(let reason, _):
                transient.append((token, reason))
            case .failJob(let reason):
                if reason != StopFlag.stopped, jobFailure == nil { jobFailure = reason }
                writeBack.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                tally[
                    Tally(outcome: "failed", reason: reason == StopFlag.stopped ? "job_stopped" : reason.rawValue),
                    default: 0] += 1
            }
        }
        if writeBack.sent > 0 { tally[Tally(outcome: "sent", reason: ""), default: 0] += writeBack.sent }

        let stop =
            jobFailure.map { JobStop(reason: "APNs rejected the job: \($0)", isBreaker: false) }
            ?? breaker.reason.map { JobStop(reason: $0, isBreaker: true) }
        if !transient.isEmpty && stop == nil {
            let retry = try await retryOrPark(transient, batch: batch, into: &writeBack)
            logFailures(writeBack, batch: batch)
            return (retry, nil)
        }
        for (token, reason) in transient {
            writeBack.failures.append(.init(token: token, status: nil, reason: reason))
        }
        logFailures(writeBack, batch: batch)
        return (nil, stop)
    }

    /// The most failed devices of one batch logged one by one; the rest are counted in one line.
    static let failuresLoggedPerBatch = 20

    /// Logs a batch's failed devices (notice) and pruned devices (debug) with the `apns-id` each notification
    /// carried, never the token: a re-send of the same notification carries the same id, so these lines match
    /// Apple's delivery log and the `apns_id` of `delivery_failures` and `dead_tokens`.
    private func logFailures(_ writeBack: WriteBack, batch: BatchMessage) {
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

    // MARK: Small jobs in groups

    /// The one batch (seq 0, attempt 1) of a small job claimed by `Store.claimSmallJobs`: its listed tokens. Only
    /// its key is used (a retry or park lists the failed tokens itself).
    private static func smallJobBatch(_ job: PreparedJob) -> BatchMessage {
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
        let clock = Date().timeIntervalSince1970
        let now = Int64(clock)
        // A message without a timestamp counts as published now (ms since 1970).
        let receivedAt = Int64(clock * 1000)
        func row(_ small: SmallJobQueue.Item, done: WriteBack?) -> SmallJobRow {
            SmallJobRow(
                id: small.job.id, app: small.job.app, spec: small.spec, publishedAt: small.publishedAt ?? receivedAt,
                tokenCount: small.tokens.count, done: done)
        }
        for small in jobs {
            let job = small.job
            guard let app = configuration.apps.app(job.app), let client = clients.client(for: job.app) else {
                sent.appGone.append(job)
                sent.rows.append(row(small, done: nil))
                continue
            }
            if let expiration = job.template.expiration, expiration != 0, expiration < now {
                var writeBack = Self.firstWriteBack(of: job, devices: small.tokens.count)
                writeBack.expired = small.tokens.count
                tally[Tally(outcome: "expired", reason: ""), default: 0] += small.tokens.count
                sent.rows.append(row(small, done: writeBack))
                continue
            }
            sendable.append(
                (
                    small, client,
                    RequestList(job: job, bundleID: app.topic, tokens: small.tokens, payloads: nil)
                ))
        }

        // Every job's notifications at once, one transport batch per APNs client, up to `sendConcurrency` in flight
        // in all.
        var byClient: [ObjectIdentifier: (client: APNSClient, jobs: [Int])] = [:]
        for (number, (_, client, _)) in sendable.enumerated() {
            byClient[ObjectIdentifier(client), default: (client, [])].jobs.append(number)
        }
        let concurrency = max(1, configuration.sendConcurrency / max(1, byClient.count))
        let results = await withTaskGroup(of: [(Int, [(DeviceToken, Disposition, Int)])].self) { group in
            for (client, numbers) in byClient.values {
                let shares = numbers.map { number in
                    let (small, _, requests) = sendable[number]
                    return Share(
                        requests: requests,
                        range: 0..<requests.count,
                        stop: StopFlag(job: small.job.key, registry: stoppedJobs),
                        publishedAt: small.publishedAt ?? receivedAt
                    )
                }
                group.addTask {
                    let results = await sendProbingFirst(shares, through: client, concurrency: concurrency)
                    return Array(zip(numbers, results))
                }
            }
            var collected = [[(DeviceToken, Disposition, Int)]](repeating: [], count: sendable.count)
            for await done in group {
                for (number, result) in done { collected[number] = result }
            }
            return collected
        }

        for ((small, _, _), result) in zip(sendable, results) {
            let batch = Self.smallJobBatch(small.job)
            var writeBack = Self.firstWriteBack(of: small.job, devices: small.tokens.count)
            let (retry, stop) = try await settle(result, batch: batch, into: &writeBack, tally: &tally, prior: nil)
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

    /// Counts outcomes once per (outcome, reason) for a whole batch or group, not per notification: each record
    /// looks a counter up.
    private func record(_ tally: [Tally: Int]) {
        for (key, count) in tally { metrics.record(outcome: key.outcome, reason: key.reason, count: count) }
    }

    /// The write-back of a job's first batch: its devices, and the listed entries that were not tokens (each failed
    /// alone, counted once, with the first batch).
    private static func firstWriteBack(of job: PreparedJob, devices: Int) -> WriteBack {
        var writeBack = WriteBack(jobID: job.id, app: job.app)
        writeBack.rejectedTokens = job.invalidTokenCount
        writeBack.targeted = devices + job.invalidTokenCount
        return writeBack
    }

    // MARK: Devices and requests

    /// A batch's devices by the environment each is sent to, in a fixed order: all in the app's environment
    /// unless the app serves several (`AppConfiguration.environment(ofDevice:)`).
    static func byEnvironment(
        _ devices: [StoredDevice], app: AppConfiguration
    ) -> [(AppConfiguration.Environment, [StoredDevice])] {
        guard app.sendsPerDeviceEnvironment else { return [(app.environment, devices)] }
        let grouped = Dictionary(grouping: devices) { app.environment(ofDevice: $0.environment) }
        return grouped.sorted { $0.key.rawValue < $1.key.rawValue }
    }

    /// The devices of a batch: its explicit tokens (with their stored locales and environments when payloads vary
    /// or the app serves several environments), or its key range of the job's audience read again now.
    private func devices(of batch: BatchMessage, job: PreparedJob, app: AppConfiguration) async throws -> [StoredDevice]
    {
        let withDetails = job.template.variesPerDevice || app.sendsPerDeviceEnvironment
        if let tokens = batch.tokens {
            let parsed = tokens.map(DeviceToken.init(trustedHex:))
            guard withDetails else {
                return parsed.map { StoredDevice(token: $0, locale: nil, registeredAt: 0) }
            }
            let stored = Dictionary(
                try await store.devices(app: job.app, tokens: parsed).map { ($0.token, $0) },
                uniquingKeysWith: { first, _ in first }
            )
            return parsed.map { stored[$0] ?? StoredDevice(token: $0, locale: nil, registeredAt: 0) }
        }
        // The planner bounded the range at `batchSize` devices; one more per page means a range that has not
        // grown since (the usual case) is read in one query, not a full page and then an empty one.
        let pageSize = configuration.batchSize + 1
        var devices: [StoredDevice] = []
        var cursor = batch.after
        while true {
            let page = try await store.devicesPage(
                app: job.app,
                filter: job.audience.filter,
                after: cursor,
                through: batch.through,
                limit: pageSize,
                withDetails: withDetails
            )
            devices += page
            guard page.count == pageSize, let last = page.last else { break }
            cursor = last.token.hex
        }
        return devices
    }

    private func makeRequests(
        for devices: [StoredDevice],
        job: PreparedJob,
        bundleID: String,
        badges: [String: Int]
    ) -> RequestList {
        let template = job.template
        let tokens = devices.map(\.token)
        guard template.variesPerDevice else {
            return RequestList(job: job, bundleID: bundleID, tokens: tokens, payloads: nil)
        }
        var byVariant: [String: [UInt8]] = [:]
        let payloads = devices.map { device in
            let variant = template.variant(for: device.locale)
            if let badge = badges[device.token.hex] { return template.payload(variant: variant, badge: badge) }
            if let cached = byVariant[variant ?? ""] { return cached }
            let payload = template.payload(variant: variant, badge: nil)
            byVariant[variant ?? ""] = payload
            return payload
        }
        return RequestList(job: job, bundleID: bundleID, tokens: tokens, payloads: payloads)
    }

    // MARK: Sending

    /// Sends every request with at most `sendConcurrency` in flight, in throttled chunks if the job has a rate;
    /// the first request goes alone either way (see `sendProbingFirst`).
    private func send(
        _ requests: RequestList,
        job: PreparedJob,
        client: APNSClient,
        throttle: Int?,
        publishedAt: Int64
    ) async throws -> [(DeviceToken, Disposition, Int)] {
        let share = Share(
            requests: requests,
            range: 0..<requests.count,
            stop: StopFlag(job: job.key, registry: stoppedJobs),
            publishedAt: publishedAt
        )
        guard let throttle else { return await sendProbingFirst([share], through: client)[0] }
        // Throttled: the probe, then chunks of a tenth of the rate, each once the job's rate (shared by every
        // worker) lets it go.
        var results: [(DeviceToken, Disposition, Int)] = []
        results.reserveCapacity(requests.count)
        var rest = share
        var chunk = 1
        while !rest.range.isEmpty {
            let slice = rest.prefix(chunk)
            let wait = try await store.throttle(job: job.key, count: slice.range.count, perSecond: throttle)
            if wait > .zero { try await Task.sleep(for: wait) }
            results += await Self.sendShares(
                [slice],
                through: client,
                concurrency: configuration.sendConcurrency,
                policy: configuration.retryPolicy,
                metrics: metrics
            )[0]
            rest = rest.dropFirst(slice.range.count)
            chunk = max(1, min(throttle / 10, configuration.sendConcurrency))
        }
        return results
    }

    /// Sends the shares as two transport batches: each share's first request, then the rest of each share whose
    /// job was not stopped by its first answer. A job APNs rejects as a whole (bad topic, credentials, payload)
    /// costs one request per batch, not a batch's worth of concurrent ones. Returns each share's results, in order.
    private func sendProbingFirst(
        _ shares: [Share],
        through client: APNSClient,
        concurrency: Int? = nil
    ) async -> [[(DeviceToken, Disposition, Int)]] {
        let concurrency = concurrency ?? configuration.sendConcurrency
        let firsts = await Self.sendShares(
            shares.map { $0.prefix(1) },
            through: client,
            concurrency: concurrency,
            policy: configuration.retryPolicy,
            metrics: metrics
        )
        var rests = await Self.sendShares(
            shares.map { $0.dropFirst(1) }.filter { !$0.range.isEmpty },
            through: client,
            concurrency: concurrency,
            policy: configuration.retryPolicy,
            metrics: metrics
        )[...]
        return zip(shares, firsts).map { share, first in
            share.range.count > 1 ? first + rests.removeFirst() : first
        }
    }

    /// One job's share of a transport batch.
    struct Share: Sendable {
        var requests: RequestList
        var range: Range<Int>
        var stop: StopFlag
        /// When the producer published the job (ms since 1970).
        var publishedAt: Int64

        /// The share's first `count` requests.
        func prefix(_ count: Int) -> Share {
            var share = self
            share.range = range.lowerBound..<min(range.lowerBound + count, range.upperBound)
            return share
        }

        /// The share without its first `count` requests.
        func dropFirst(_ count: Int) -> Share {
            var share = self
            share.range = range.dropFirst(count)
            return share
        }
    }

    /// Sends the shares' requests through `client` as one transport batch (answers taken on the event loop, no
    /// task per notification), then retries transient failures in-process with jittered backoff. Returns each
    /// share's results, in order. A share whose job stops (rejected as a whole) sends nothing more.
    private static func sendShares(
        _ shares: [Share],
        through client: APNSClient,
        concurrency: Int,
        policy: RetryPolicy,
        metrics: WorkerMetrics
    ) async -> [[(DeviceToken, Disposition, Int)]] {
        // Flat index -> (share, index in its request list).
        var owners: [(share: Int, index: Int)] = []
        owners.reserveCapacity(shares.reduce(0) { $0 + $1.range.count })
        for (number, share) in shares.enumerated() {
            for index in share.range { owners.append((number, index)) }
        }
        let locate = owners
        let answers = await client.sendAll(
            count: locate.count,
            concurrency: concurrency,
            request: { flat in
                let (number, index) = locate[flat]
                // Not sent once the job is known rejected as a whole (the probe, another batch, or this one).
                return shares[number].stop.isSet ? nil : shares[number].requests[index]
            },
            onAnswer: { flat, answer in
                // As answers arrive: the latency of delivered ones, and a job-level rejection stops the job's rest.
                let share = shares[locate[flat].share]
                let result = DeliveryResult(answer)
                if result.isSuccess {
                    recordLatency(metrics, publishedAt: share.publishedAt)
                } else if case .failJob = disposition(for: result, attempt: 1, policy: policy, jitter: 0) {
                    share.stop.set()
                }
            }
        )
        var results = shares.map { share -> [(DeviceToken, Disposition, Int)] in
            var results: [(DeviceToken, Disposition, Int)] = []
            results.reserveCapacity(share.range.count)
            return results
        }
        var retries: [(flat: Int, delay: Duration)] = []
        for (flat, answer) in answers.enumerated() {
            let (number, index) = locate[flat]
            let token = shares[number].requests.tokens[index]
            guard let answer else {
                // Not sent: the job stopped.
                results[number].append((token, .failJob(reason: StopFlag.stopped), 0))
                continue
            }
            let result = DeliveryResult(answer)
            let decided = disposition(
                for: result, attempt: 1, policy: policy, jitter: result.isSuccess ? 0 : Double.random(in: 0...1))
            if case .retry(_, let delay) = decided { retries.append((flat, delay)) }
            results[number].append((token, decided, 0))
        }
        guard !retries.isEmpty else { return results }
        let retried = await withTaskGroup(of: (Int, (DeviceToken, Disposition, Int)).self) { group in
            var running = 0
            var collected: [(Int, (DeviceToken, Disposition, Int))] = []
            for (flat, delay) in retries {
                if running == concurrency, let done = await group.next() {
                    collected.append(done)
                    running -= 1
                }
                running += 1
                group.addTask {
                    try? await Task.sleep(for: delay)
                    let share = shares[locate[flat].share]
                    let request = share.requests[locate[flat].index]
                    let result = await sendOne(
                        request, client: client, policy: policy, stop: share.stop, metrics: metrics,
                        publishedAt: share.publishedAt, from: 2
                    )
                    return (flat, result)
                }
            }
            for await done in group { collected.append(done) }
            return collected
        }
        for (flat, result) in retried {
            let (number, index) = locate[flat]
            results[number][index - shares[number].range.lowerBound] = result
        }
        return results
    }

    /// One notification with brief in-process retries of transient failures.
    private static func sendOne(
        _ request: APNSRequest,
        client: APNSClient,
        policy: RetryPolicy,
        stop: StopFlag,
        metrics: WorkerMetrics,
        publishedAt: Int64,
        from firstAttempt: Int = 1
    ) async -> (DeviceToken, Disposition, Int) {
        var attempt = firstAttempt
        while true {
            if stop.isSet { return (request.deviceToken, .failJob(reason: StopFlag.stopped), attempt - 1) }
            let result: DeliveryResult
            do {
                result = .answered(try await client.send(request))
            } catch {
                result = .transportFailure(error.code.description)
            }
            // The jitter only matters for a retry; drawing it for every success cost a getrandom call each.
            let jitter = result.isSuccess ? 0 : Double.random(in: 0...1)
            let decided = disposition(for: result, attempt: attempt, policy: policy, jitter: jitter)
            switch decided {
            case .retry(_, let delay):
                try? await Task.sleep(for: delay)
                attempt += 1
                continue
            case .failJob:
                stop.set()
            case .delivered:
                recordLatency(metrics, publishedAt: publishedAt)
            default:
                break
            }
            return (request.deviceToken, decided, attempt - 1)
        }
    }

    /// End-to-end latency of a delivered notification: from the producer's publish to APNs' answer.
    private static func recordLatency(_ metrics: WorkerMetrics, publishedAt: Int64) {
        let elapsed = Int64(Date().timeIntervalSince1970 * 1000) - publishedAt
        metrics.latency.recordMilliseconds(max(elapsed, 0))
    }

    // MARK: Retries, parking, completion

    /// Sends the transiently failed devices to the next retry queue, or parks them after the last attempt.
    /// Returns the retry batch's key if there is one.
    private func retryOrPark(
        _ transient: [(DeviceToken, String)],
        batch: BatchMessage,
        into writeBack: inout WriteBack
    ) async throws -> BatchKey? {
        let reasons = Set(transient.map(\.1)).sorted().joined(separator: ", ")
        let topology = configuration.topology
        if batch.attempt < configuration.maximumBatchAttempts {
            let retry = BatchMessage(
                app: batch.app,
                job: batch.job,
                seq: batch.seq,
                attempt: batch.attempt + 1,
                tokens: transient.map(\.0.hex)
            )
            var properties = AMQPProperties(contentType: "application/json", messageID: "\(retry.key)")
            properties.headers[ParkingHeader.attempts] = .int(Int64(batch.attempt))
            properties.headers[ParkingHeader.reason] = .string(reasons)
            let body = Array(try JSONEncoder().encode(retry))
            try await outages.untilDone("publishing a retry batch") {
                try await publisher.publish(
                    body, routingKey: topology.retryQueue(after: batch.attempt), properties: properties, mandatory: true
                )
            }
            // Devices that needed a delayed retry, each counted once (when it first leaves for the retry queues).
            if batch.attempt == 1 { writeBack.retried += transient.count }
            metrics.retriesQueued.increment(by: transient.count)
            metrics.record(outcome: "retried", reason: "transient", count: transient.count)
            return retry.key
        }
        let parked = BatchMessage(
            app: batch.app, job: batch.job, seq: batch.seq, attempt: batch.attempt, tokens: transient.map(\.0.hex))
        let body = Array(try JSONEncoder().encode(parked))
        try await outages.untilDone("parking a batch's devices") {
            try await Parking(publisher: publisher, topology: topology).park(
                body,
                properties: AMQPProperties(contentType: "application/json", messageID: "\(parked.key)"),
                reason: "transient failures after \(batch.attempt) attempts: \(reasons)",
                attempts: batch.attempt,
                origin: topology.batches
            )
        }
        metrics.devicesParked.increment(by: transient.count)
        for (token, reason) in transient {
            writeBack.failures.append(
                .init(token: token, status: nil, reason: "\(reason) (after \(batch.attempt) attempts)"))
        }
        metrics.record(outcome: "failed", reason: "exhausted", count: transient.count)
        return nil
    }

    private func finish(_ batch: BatchMessage, writeBack: WriteBack, retry: BatchKey?) async throws -> Outcome {
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
}

/// Set when APNs rejects the job as a whole, so that the rest of the batch — and the worker's other batches of
/// the same job — are not sent.
final class StopFlag: Sendable {
    /// The reason given to notifications not sent because the job stopped.
    static let stopped = APNSReason(rawValue: "JobStopped")

    private let job: JobKey
    private let registry: StoppedJobs
    private let flag = Atomic(false)
    /// The registry's version last looked at: checked per notification, the registry is read only when it changed.
    private let seenVersion = Atomic(0)

    init(job: JobKey, registry: StoppedJobs) {
        self.job = job
        self.registry = registry
    }

    var isSet: Bool {
        if flag.load(ordering: .relaxed) { return true }
        let version = registry.version
        guard version != seenVersion.load(ordering: .relaxed) else { return false }
        seenVersion.store(version, ordering: .relaxed)
        guard registry.contains(job) else { return false }
        flag.store(true, ordering: .relaxed)
        return true
    }

    func set() {
        flag.store(true, ordering: .relaxed)
        registry.insert(job)
    }
}

/// A batch's requests, each made when it is sent: a batch's worth of `APNSRequest`s at once was a large
/// allocation (and free) per batch, and glibc's consolidation of it showed in the profile. A class: shares of a
/// batch are copied as they are split, and a struct copy retained each of the template's fields.
final class RequestList: Sendable {
    let template: NotificationTemplate
    /// The apns-topic, worked out once for the batch.
    let topic: String
    let tokens: [DeviceToken]
    /// Each device's payload when payloads vary (localizations, badges); nil when all get the template's.
    let payloads: [[UInt8]]?
    /// Each request's `apns-id`, the same for every send of the job to the device.
    let ids: NotificationID

    init(job: PreparedJob, bundleID: String, tokens: [DeviceToken], payloads: [[UInt8]]?) {
        self.template = job.template
        self.topic = template.pushType.topic(forBundleID: bundleID)
        self.tokens = tokens
        self.payloads = payloads
        self.ids = NotificationID(app: job.app, job: job.id)
    }

    var count: Int { tokens.count }

    subscript(index: Int) -> APNSRequest {
        var request = template.request(to: tokens[index], topic: topic, payload: payloads?[index])
        request.apnsID = ids.id(for: tokens[index])
        return request
    }
}

extension DeliveryResult {
    /// The transport's result as the pipeline sees it: an answer, or a failure described by its code.
    init(_ answer: Result<APNSOutcome, APNSTransportError>) {
        switch answer {
        case .success(let outcome): self = .answered(outcome)
        case .failure(let error): self = .transportFailure(error.code.description)
        }
    }

    var isSuccess: Bool {
        if case .answered(let outcome) = self { return outcome.isSuccess }
        return false
    }
}

/// The jobs a worker has seen rejected as a whole (bounded: the oldest are forgotten).
final class StoppedJobs: Sendable {
    private let jobs = Mutex<[JobKey]>([])
    private let insertions = Atomic(0)

    /// Changes whenever a job is added (after it is readable through `contains`).
    var version: Int { insertions.load(ordering: .acquiring) }

    func contains(_ job: JobKey) -> Bool { jobs.withLock { $0.contains(job) } }

    func insert(_ job: JobKey) {
        let added = jobs.withLock { jobs in
            guard !jobs.contains(job) else { return false }
            jobs.append(job)
            if jobs.count > 64 { jobs.removeFirst() }
            return true
        }
        if added { insertions.add(1, ordering: .releasing) }
    }
}

extension PreparedJob.Audience {
    /// The device filter that reads this audience from PostgreSQL (tokens are never read by filter).
    var filter: DeviceFilter {
        switch self {
        case .tokens: .all
        case .users(let users): .users(users)
        case .topic(let topic, let locales): locales.map { .locales(.topic(topic), $0) } ?? .topic(topic)
        case .all(let locales): locales.map { .locales(.all, $0) } ?? .all
        }
    }
}

/// An (outcome, reason) pair of the notifications metric, counted per batch.
private struct Tally: Hashable {
    var outcome: String
    var reason: String
}
