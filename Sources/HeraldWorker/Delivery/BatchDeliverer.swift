import APNSCore
import APNSTransport
import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import Synchronization

/// Delivers one batch through the stages: reads its devices and builds its requests (here), sends them
/// (`Sender`), decides what the answers mean (`Settlement`), and carries that out and writes it with the batch's
/// completion in one transaction (`BatchCommit`). Small jobs take the same stages in groups (`SmallJobGroups`).
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
        /// The job is throttled and the batch's turn is further off than the throttle window: nothing sent; the
        /// batch goes back to a delay queue for about this long.
        case deferred(Duration)
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

        let job = try PreparedJob.decode(Array(spec.utf8)) { batch.job }
        // The app as the apps file in use has it, and its clients, leased until the batch is done (a reload on
        // SIGHUP shuts replaced clients down only after that).
        guard let lease = clients.lease(job.app) else {
            let stopped = try await stopJob(job, reason: "app \(job.app) is no longer in the apps file", batch: batch)
            return stopped ? .completed(jobFinished: .failed) : .skipped(.failed)
        }
        defer { clients.release(lease) }
        let app = lease.app
        let appClients = lease.clients

        var writeBack = WriteBack(jobID: job.id, app: job.app)
        let devices = try await devices(of: batch, job: job, app: app)
        // Counters count devices, not attempts: a retry batch's devices were targeted by the attempt before it.
        writeBack.targeted = batch.attempt == 1 ? devices.count : 0
        if batch.seq == 0 && batch.attempt == 1 && batch.tokens != nil {
            // Entries of the job's token list that were not tokens fail alone; counted once, with the first batch.
            writeBack.rejectedTokens = job.invalidTokenCount
            writeBack.targeted += job.invalidTokenCount
        }

        let now = configuration.clock.unixSeconds
        if let expiration = job.template.expiration, expiration != 0, expiration < now {
            writeBack.expired = devices.count
            metrics.record(outcome: NotificationOutcome.expired.rawValue, reason: "", count: devices.count)
            return try await finish(batch, writeBack: writeBack, retry: nil)
        }

        // The lower of the job's and the app's rates paces the batch's sends.
        var pacing: Pacing? = nil
        if let rate = [throttle, app.maxPerSecond].compactMap({ $0 }).min() {
            // The batch's turn in the job's and the app's rates (shared by every worker), taken only if it is near:
            // a worker never holds a batch for long waiting for it.
            let slot = try await store.takeTurn(
                job: job.key, count: devices.count, jobRate: throttle, appRate: app.maxPerSecond,
                within: configuration.throttleWindow)
            switch slot {
            case .later(let wait):
                metrics.batchesDeferred.increment()
                return .deferred(wait)
            case .taken(let wait):
                pacing = Pacing(start: configuration.clock.now() + wait, rate: rate)
            }
        }

        var badges: [String: Int] = [:]
        if let increment = job.template.badgeIncrement {
            // Once per device per job: a retry or redelivery gets the badge the first delivery computed.
            badges = try await store.incrementBadges(job: job.key, tokens: devices.map(\.token), by: increment)
        }
        // Each device to the APNs environment it registered with, for an app that serves both; else all to one.
        var results: [DeviceResult] = []
        for (environment, share) in Self.byEnvironment(devices, app: app) {
            let client = appClients.client(for: environment)
            let requests = makeRequests(for: share, job: job, bundleID: app.topic, badges: badges)
            results += try await send(requests, job: job, client: client, pacing: &pacing, publishedAt: publishedAt)
        }

        // The notifications are out: from here each write is held through an outage and tried again alone, and a
        // failure that remains is `SentButNotSettled`, so nothing retries the batch from the start (sending again).
        do {
            var tally: [Tally: Int] = [:]
            let (retryKey, stop) = try await settle(
                results, batch: batch, of: job, into: &writeBack, tally: &tally,
                reads: BreakerReads(
                    prior: {
                        try await outages.untilDone("reading a job's prune counts") {
                            try await store.pruneBreakerCounts(job.key)
                        }
                    },
                    unproven: { tokens in
                        try await outages.untilDone("reading a batch's unproven devices") {
                            try await store.unprovenDevices(app: job.app, tokens: tokens)
                        }
                    }))
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
    var outages: OutageWaiter {
        OutageWaiter(store: store, logger: logger, onEvent: configuration.onJobHandled, clock: configuration.clock)
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

    /// The sending stage with the worker's settings.
    var sender: Sender {
        Sender(
            concurrency: configuration.sendConcurrency, policy: configuration.retryPolicy, metrics: metrics,
            clock: configuration.clock)
    }

    /// A throttled batch's turn: its sends go out at `rate` from `start`, when the turn it took begins. Paced from
    /// the turn, not from whenever the worker gets to them, so that a batch that starts late catches up inside its
    /// own turn instead of running into the next one's.
    struct Pacing {
        let start: ContinuousClock.Instant
        let rate: Int
        /// Sends made so far, over every environment's share of the batch.
        var sent = 0

        /// When the next send is due.
        var due: ContinuousClock.Instant { start + .seconds(Double(sent) / Double(rate)) }
    }

    /// Sends every request with at most `sendConcurrency` in flight, in chunks of a tenth of the rate paced by
    /// `pacing` if the batch is throttled; the first request goes alone either way (`Sender.sendProbingFirst`).
    private func send(
        _ requests: RequestList,
        job: PreparedJob,
        client: APNSClient,
        pacing: inout Pacing?,
        publishedAt: Int64
    ) async throws -> [DeviceResult] {
        let share = Sender.Share(
            requests: requests,
            range: 0..<requests.count,
            stop: StopFlag(job: job.key, registry: stoppedJobs),
            publishedAt: publishedAt
        )
        guard var paced = pacing else { return await sender.sendProbingFirst([share], through: client)[0] }
        defer { pacing = paced }
        var results: [DeviceResult] = []
        results.reserveCapacity(requests.count)
        var rest = share
        var chunk = 1
        while !rest.range.isEmpty {
            try await configuration.clock.sleep(until: paced.due)
            let slice = rest.prefix(chunk)
            results += await sender.sendShares([slice], through: client)[0]
            paced.sent += slice.range.count
            rest = rest.dropFirst(slice.range.count)
            chunk = max(1, min(paced.rate / 10, configuration.sendConcurrency))
        }
        return results
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
        // Live Activity targets are resolved into tokens before planning (`LiveActivityStage`): should one reach
        // a device read, it matches no device rather than every device of the app.
        case .activity, .channel: .users([])
        }
    }
}
