import APNSCore
import FCMCore
import Foundation
import HeraldCore
import HeraldStore
import Logging
import PushTransport

/// One delivery run over N ≥ 1 units, through the stages in order: prepare (here: the app's lease, expiry and the
/// first counts, `DeliveryUnit`; for a planned batch also its start, its turn in its rates, badges and devices),
/// send (`Sender`), settle (`Settler`: a plan whose effects are values), commit (`Commit` carries them out and
/// writes the unit's end). A planned batch is one unit (`deliver(_:)`); a group of small jobs is N (`sendGroup`).
///
/// The caller acknowledges a message only after its run returns.
struct DeliveryRun: Sendable {
    let store: any DeliveryStore
    /// The apps in use and their transports, each app's leased for the length of a run (a reload on SIGHUP shuts
    /// replaced clients down only after that).
    let apps: any TransportLeasing
    let configuration: WorkerConfiguration
    let commit: Commit
    let metrics: WorkerMetrics
    let logger: Logger

    /// The settlement stage with the worker's settings.
    var settler: Settler {
        Settler(
            breaker: configuration.pruneBreaker, maximumAttempts: configuration.maximumBatchAttempts,
            stoppedJobs: commit.stoppedJobs)
    }

    /// The sending stage with the worker's settings.
    var sender: Sender {
        Sender(
            concurrency: configuration.sendConcurrency, policy: configuration.retryPolicy, metrics: metrics,
            clock: configuration.clock)
    }

    /// Holds writes through an outage of the database.
    var outages: OutageWaiter { commit.outages }

    /// Delivers one planned batch.
    func deliver(_ batch: BatchMessage) async throws -> DeliveryOutcome {
        // A retry after a provider's `Retry-After` that came back early waits again, in the delay queues.
        if let notBefore = batch.notBefore {
            let wait = notBefore - configuration.clock.unixMilliseconds
            if wait > 0 {
                metrics.batchesDeferred.increment()
                return .deferred(.milliseconds(wait))
            }
        }
        let spec: String
        let publishedAt: Int64
        let throttle: Int?
        // An earlier delivery's committed slices are not sent again (schemas/032).
        let progress: BatchProgress
        switch try await store.beginBatch(batch.key) {
        case .alreadyDone:
            metrics.batchesDuplicate.increment()
            return .alreadyDone
        case .unknownJob:
            return .unknownJob
        case .jobStopped(let state):
            return try await commit.skip(batch) ? .skipped(state) : .alreadyDone
        case .deliver(let jobSpec, let published, let perSecond, let earlier):
            (spec, publishedAt, throttle, progress) = (jobSpec, published, perSecond, earlier)
        }

        let job = try PreparedJob.decode(Array(spec.utf8)) { batch.job }
        guard let lease = apps.leaseTransports(job.app) else {
            let stopped = try await commit.stopJob(job, reason: DeliveryUnit.appGone(job), batch: batch)
            return stopped ? .completed(jobFinished: .failed) : .skipped(.failed)
        }
        defer { apps.release(lease) }
        let app = lease.app

        // `target.platforms` leaves the other platforms' devices out before anything is counted or sent.
        let read = try await devices(of: batch, job: job, app: app)
        let devices = Self.unsettled(
            job.platforms == nil ? read : read.filter { job.reaches($0.platform) }, of: batch, after: progress)
        let resumed = progress.settled > 0
        /// The first counts of `count` devices of the batch: its invalid entries only with its very first part.
        func firstCounts(devices count: Int, first: Bool) -> DeliveryUnit {
            var unit = DeliveryUnit(job: job, batch: batch, publishedAt: publishedAt, devices: count)
            if resumed || !first { unit.leaveOutInvalidTokens(of: job) }
            return unit
        }
        var unit = firstCounts(devices: devices.count, first: true)
        if DeliveryUnit.isExpired(job, now: configuration.clock.unixSeconds) {
            commit.record(unit.expire(devices: devices.count))
            return try await commit.finish(batch, writeBack: unit.writeBack, retry: nil)
        }

        // The lower of the job's and the app's rates paces the batch's sends.
        var pacing: Sender.Pacing? = nil
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
                pacing = Sender.Pacing(start: configuration.clock.now() + wait, rate: rate)
            }
        }

        var badges: [String: Int] = [:]
        if let increment = job.template.badgeIncrement {
            // Once per device per job: a retry or redelivery gets the badge the first delivery computed.
            badges = try await store.incrementBadges(job: job.key, tokens: devices.map(\.token), by: increment)
        }
        // In slices of `commitSlice` devices: each is sent, settled and committed before the next is sent, so a
        // worker that dies re-sends at most one slice of each batch it held. The last slice completes the batch,
        // taking in the transient failures the earlier ones held back. (Committing a slice while the next was sent
        // needed slices half the size for the same bound, and cost more than the wait it saved.)
        let sliceSize = max(1, configuration.commitSlice)
        let reads = breakerReads(of: job)
        // First deliveries are recorded only for an app with unproven devices (most have none): asked once here,
        // so that a slice of such an app commits in one statement.
        let recordsDeliveries = try await store.hasUnprovenDevices(app: job.app)
        var held = progress.heldRetries.map(DeviceToken.init(trustedHex:))
        var start = 0
        while true {
            let end = min(start + sliceSize, devices.count)
            let slice = devices[start..<end]
            var results = try await send(
                slice, of: job, publishedAt: publishedAt, app: app, lease: lease, badges: badges, pacing: &pacing,
                probing: start == 0)
            var sliceUnit = firstCounts(devices: slice.count, first: start == 0)
            // The notifications are out: from here each write is held through an outage and tried again alone, and
            // a failure that remains is `SentButNotSettled`, so nothing retries the batch from the start.
            do {
                if end < devices.count {
                    var unbounded = settler
                    unbounded.maximumAttempts = .max  // held back: the last slice decides their fate
                    var plan = try await unbounded.settle(results, batch: batch, reads: reads)
                    if !recordsDeliveries { plan.delivered = [] }
                    if plan.stop == nil {
                        let (now, heldBack) = plan.holdingTransient()
                        var writeBack = sliceUnit.writeBack
                        writeBack.add(now)
                        let committed = try await commit.commitSlice(
                            batch, plan: now, writeBack: writeBack, settled: slice.count,
                            through: batch.tokens == nil ? slice.last?.token.hex : nil, held: heldBack)
                        guard committed else {
                            metrics.batchesDuplicate.increment()
                            return .alreadyDone
                        }
                        held += heldBack
                        start = end
                        continue
                    }
                    // The job stops here: the rest of the batch is not sent, as a stopped job's devices never are.
                    results += devices[end...].map {
                        DeviceResult(token: $0.token, disposition: .failJob(reason: StopFlag.stopped), retries: 0)
                    }
                    sliceUnit = firstCounts(devices: devices.count - start, first: start == 0)
                }
                var plan = try await settler.settle(results, batch: batch, reads: reads).takingIn(
                    held: held, attempt: batch.attempt, maximumAttempts: configuration.maximumBatchAttempts)
                if !recordsDeliveries { plan.delivered = [] }
                return try await commit.completeBatch(batch, job: job, plan: plan, writeBack: sliceUnit.writeBack)
            } catch {
                throw SentButNotSettled(underlying: error)
            }
        }
    }

    /// Sends `devices`, each through its platform's provider: an iOS device to the APNs environment it registered
    /// with (for an app that serves both; else all to one), an Android device through the app's FCM client. The two
    /// providers' shares are in flight together (one after the other for a paced batch, whose turn they share).
    private func send(
        _ devices: ArraySlice<StoredDevice>, of job: PreparedJob, publishedAt: Int64, app: AppConfiguration,
        lease: TransportLease, badges: [String: Int], pacing: inout Sender.Pacing?, probing: Bool
    ) async throws -> [DeviceResult] {
        let sender = self.sender
        let apple = devices.filter { $0.platform == .ios }
        let android = apple.count == devices.count ? [] : devices.filter { $0.platform == .android }
        let web = apple.count + android.count == devices.count ? [] : devices.filter { $0.platform == .web }
        let stop = StopFlag(job: job.key, registry: commit.stoppedJobs)
        var fcmShare: Sender.Share<FCMRequestList>? = nil
        var fcm: (any NotificationTransport<[UInt8]>)? = nil
        var results: [DeviceResult] = []
        if !web.isEmpty {
            // Browsers first, one origin's share after another (a handful of push services).
            results += try await sendWeb(
                web, of: job, publishedAt: publishedAt, app: app, lease: lease, badges: badges, stop: stop,
                pacing: &pacing, probing: probing)
        }
        if !android.isEmpty {
            switch Self.fcmRequests(
                for: android, job: job, app: app, transport: lease.fcm, badges: badges,
                now: configuration.clock.unixSeconds)
            {
            case .unsent(let disposition):
                results += android.map { DeviceResult(token: $0.token, disposition: disposition, retries: 0) }
            case .send(let requests, let transport):
                fcmShare = Sender.Share(
                    requests: requests, range: 0..<requests.count, stop: stop, publishedAt: publishedAt)
                fcm = transport
            }
        }
        if let share = fcmShare, let fcm, pacing == nil, !apple.isEmpty {
            async let androidResults = sender.sendUnpaced(share, through: fcm, probing: probing)
            results += try await sendApple(
                apple, of: job, publishedAt: publishedAt, app: app, lease: lease, badges: badges, stop: stop,
                pacing: &pacing, probing: probing)
            return results + (await androidResults)
        }
        results += try await sendApple(
            apple, of: job, publishedAt: publishedAt, app: app, lease: lease, badges: badges, stop: stop,
            pacing: &pacing, probing: probing)
        if let share = fcmShare, let fcm {
            results += try await sender.send(share, through: fcm, pacing: &pacing, probing: probing)
        }
        return results
    }

    /// Sends the iOS devices, each environment's share through its client.
    private func sendApple(
        _ apple: [StoredDevice], of job: PreparedJob, publishedAt: Int64, app: AppConfiguration,
        lease: TransportLease, badges: [String: Int], stop: StopFlag, pacing: inout Sender.Pacing?, probing: Bool
    ) async throws -> [DeviceResult] {
        var results: [DeviceResult] = []
        for (environment, share) in Self.byEnvironment(apple, app: app) where !share.isEmpty {
            guard let transport = lease.transport(for: environment) else {
                results += share.map { DeviceResult(token: $0.token, disposition: Self.noAPNs, retries: 0) }
                continue
            }
            let requests = Self.requests(for: share, job: job, bundleID: app.topic, badges: badges)
            results += try await sender.send(
                Sender.Share(requests: requests, range: 0..<requests.count, stop: stop, publishedAt: publishedAt),
                through: transport, pacing: &pacing, probing: probing)
        }
        return results
    }

    /// What an iOS device of an app without APNs credentials comes to: failed, kept (the app may gain them).
    static let noAPNs = Disposition.failDevice(reason: ProviderReason(rawValue: "NoAPNsCredentials", provider: "APNs"))

    /// The devices an earlier delivery of `batch` did not settle: after the first `settled` of its listed tokens, or
    /// after `settledThrough` of its key range (read in token order; a device pruned since is not read again).
    static func unsettled(_ devices: [StoredDevice], of batch: BatchMessage, after progress: BatchProgress)
        -> [StoredDevice]
    {
        guard progress.settled > 0 else { return devices }
        if batch.tokens != nil { return Array(devices.dropFirst(progress.settled)) }
        guard let through = progress.settledThrough else { return devices }
        return devices.filter { $0.token.hex > through }
    }

    /// The prune breaker's reads for a planned batch of `job`, each held through an outage.
    private func breakerReads(of job: PreparedJob) -> BreakerReads {
        let (store, outages) = (self.store, self.outages)
        return BreakerReads(
            prior: {
                try await outages.untilDone("reading a job's prune counts") {
                    try await store.pruneBreakerCounts(job.key)
                }
            },
            unproven: { tokens in
                try await outages.untilDone("reading a batch's unproven devices") {
                    try await store.unprovenDevices(app: job.app, tokens: tokens)
                }
            })
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
        let withDetails = job.template.variesPerDevice || app.readsDeviceDetails
        if let tokens = batch.tokens {
            let parsed = tokens.map(DeviceToken.init(trustedHex:))
            guard withDetails || app.readsListedDevices else {
                // An app of APNs alone reads no device: each listed token goes by its form (`DeviceAddress.byForm`).
                return parsed.map { token in
                    let (platform, kind) = DeviceAddress.byForm(token)
                    return StoredDevice(token: token, locale: nil, registeredAt: 0, platform: platform, fcmKind: kind)
                }
            }
            let stored = Dictionary(
                try await store.devices(app: job.app, tokens: parsed).map { ($0.token, $0) },
                uniquingKeysWith: { first, _ in first }
            )
            // A listed token that is not registered is sent as given, by the platform its form names
            // (`DeviceAddress.byForm`).
            return parsed.map { token in
                if let device = stored[token] { return device }
                let (platform, kind) = DeviceAddress.byForm(token)
                return StoredDevice(token: token, locale: nil, registeredAt: 0, platform: platform, fcmKind: kind)
            }
        }
        // The planner bounded the range at `batchSize` devices; one more per page means a range that has not
        // grown since (the usual case) is read in one query, not a full page and then an empty one.
        let pageSize = configuration.batchSize + 1
        var devices: [StoredDevice] = []
        var cursor = batch.after
        while true {
            let page = try await store.devicesPage(
                app: job.app, filter: job.audience.filter, after: cursor, through: batch.through, limit: pageSize,
                withDetails: withDetails, withSubscriptions: app.webpush != nil)
            devices += page
            guard page.count == pageSize, let last = page.last else { break }
            cursor = last.token.hex
        }
        return devices
    }

    /// The requests of `devices`: the template's payload for all, or each device's variant (its locale) and badge.
    static func requests(for devices: [StoredDevice], job: PreparedJob, bundleID: String, badges: [String: Int])
        -> RequestList
    {
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
}
