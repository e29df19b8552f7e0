import APNSCore
import FCMCore
import HeraldCore
import HeraldStore
import PushTransport

extension DeliveryRun {
    /// The run of a group of small jobs (N units, one per job): each prepared (`DeliveryUnit`), every notification
    /// of the group in flight together (bounded by `sendConcurrency`), each unit settled and its effects carried
    /// out. Returns each job's row for the claim to write. Runs inside the group's claim: it touches no database.
    ///
    /// Only for jobs routed as a group (`Route.smallGroup`): one batch, the same payload for every device, no rate.
    func sendGroup(_ jobs: [RoutedJob]) async throws -> SentGroup {
        var sent = SentGroup()
        var units: [Unit] = []
        var tally: [Tally: Int] = [:]
        let unixTime = configuration.clock.unixTime()
        let now = Int64(unixTime)
        // A message without a timestamp counts as published now (ms since 1970).
        let receivedAt = Int64(unixTime * 1000)
        func row(_ small: RoutedJob, done: WriteBack?) -> SmallJobRow {
            SmallJobRow(
                id: small.job.id, app: small.job.app, spec: small.spec, publishedAt: small.publishedAt ?? receivedAt,
                tokenCount: small.tokens.count, done: done)
        }
        // Each app's clients are leased until the group is sent (a reload shuts replaced clients down after).
        var leases: [String: TransportLease] = [:]
        defer { for lease in leases.values { apps.release(lease) } }
        for small in jobs {
            let job = small.job
            if leases[job.app] == nil, let lease = apps.leaseTransports(job.app) { leases[job.app] = lease }
            guard let lease = leases[job.app] else {
                sent.appGone.append(job)
                sent.rows.append(row(small, done: nil))
                continue
            }
            // A listed token's platform follows its form (`DeviceAddress.byForm`, docs/fcm.md); `target.platforms`
            // leaves the others out before they are counted.
            var (apple, android) = Self.byForm(small.tokens)
            if !job.reaches(.ios) { apple = [] }
            if !job.reaches(.android) { android = [] }
            var unit = DeliveryUnit(
                job: job, batch: DeliveryUnit.firstBatch(of: job), publishedAt: small.publishedAt ?? receivedAt,
                devices: apple.count + android.count)
            if DeliveryUnit.isExpired(job, now: now) {
                tally.merge(unit.expire(devices: apple.count + android.count), uniquingKeysWith: +)
                sent.rows.append(row(small, done: unit.writeBack))
                continue
            }
            var entry = Unit(small: small, unit: unit)
            if !apple.isEmpty, let standard = lease.standard {
                entry.apns = (
                    standard, RequestList(job: job, bundleID: lease.app.topic, tokens: apple, payloads: nil)
                )
            } else if !apple.isEmpty {
                entry.unsent = apple.map { DeviceResult(token: $0, disposition: Self.noAPNs, retries: 0) }
            }
            if !android.isEmpty {
                let devices = android.map { (token, kind) in
                    StoredDevice(token: token, locale: nil, registeredAt: 0, platform: .android, fcmKind: kind)
                }
                switch Self.fcmRequests(
                    for: devices, job: job, app: lease.app, transport: lease.fcm, badges: [:], now: now)
                {
                case .unsent(let disposition):
                    entry.unsent += android.map { DeviceResult(token: $0.token, disposition: disposition, retries: 0) }
                case .send(let requests, let transport):
                    entry.fcm = (transport, requests)
                }
            }
            units.append(entry)
        }

        let results = await send(units)

        let settler = self.settler
        for (number, result) in results.enumerated() {
            let (small, batch) = (units[number].small, units[number].unit.batch)
            var writeBack = units[number].unit.writeBack
            let plan = try await settler.settle(result, batch: batch, reads: nil)
            let retry = try await commit.carryOut(plan, of: batch, job: small.job, into: &writeBack)
            tally.merge(plan.tally, uniquingKeysWith: +)
            if let stop = plan.stop {
                sent.stopped.append((small.job, stop))
                if !stop.isBreaker {
                    // The job's error names the reason; its devices count as failed without a record each.
                    writeBack.rejectedTokens += writeBack.failures.count
                    writeBack.failures = []
                }
            }
            let plain = plan.stop == nil && retry == nil && writeBack.prunes.isEmpty && writeBack.failures.isEmpty
            sent.rows.append(row(small, done: plain ? writeBack : nil))
            if !plain {
                sent.continuing.append(BatchCompletion(key: batch.key, writeBack: writeBack, retry: retry))
            }
        }
        commit.record(tally)
        return sent
    }

    /// A small job's unit in a group, with the clients and the requests it is sent with: its APNs tokens through
    /// the app's APNs client, its Android ones through FCM's, and those it cannot send at all.
    private struct Unit: Sendable {
        let small: RoutedJob
        let unit: DeliveryUnit
        var apns: (client: any NotificationTransport<APNSRequest>, requests: RequestList)? = nil
        var fcm: (client: any NotificationTransport<[UInt8]>, requests: FCMRequestList)? = nil
        var unsent: [DeviceResult] = []

        init(small: RoutedJob, unit: DeliveryUnit) {
            self.small = small
            self.unit = unit
        }
    }

    /// Listed tokens by the platform their form names (`DeviceAddress.byForm`), Android ones with their kind.
    static func byForm(_ tokens: [DeviceToken]) -> (
        apple: [DeviceToken], android: [(token: DeviceToken, kind: FCMTarget.Kind?)]
    ) {
        var apple: [DeviceToken] = []
        var android: [(token: DeviceToken, kind: FCMTarget.Kind?)] = []
        for token in tokens {
            let (platform, kind) = DeviceAddress.byForm(token)
            if platform == .ios { apple.append(token) } else { android.append((token, kind)) }
        }
        return (apple, android)
    }

    /// Commits what a group's send left running, once the group's rows are written (`Commit.finishGroup`).
    func finishGroup(_ sent: SentGroup) async throws -> [JobKey: DeliveryOutcome] {
        try await commit.finishGroup(sent)
    }

    /// Sends every unit's requests at once, one transport batch per client (APNs' and FCM's), up to
    /// `sendConcurrency` in flight in all; each unit's first request to each provider goes alone
    /// (`Sender.sendProbingFirst`). Returns each unit's results.
    private func send(_ units: [Unit]) async -> [[DeviceResult]] {
        var apple: [ObjectIdentifier: (client: any NotificationTransport<APNSRequest>, units: [Int])] = [:]
        var android: [ObjectIdentifier: (client: any NotificationTransport<[UInt8]>, units: [Int])] = [:]
        for (number, unit) in units.enumerated() {
            if let (client, _) = unit.apns {
                apple[ObjectIdentifier(client), default: (client, [])].units.append(number)
            }
            if let (client, _) = unit.fcm {
                android[ObjectIdentifier(client), default: (client, [])].units.append(number)
            }
        }
        var sender = self.sender
        sender.concurrency = max(1, configuration.sendConcurrency / max(1, apple.count + android.count))
        let stoppedJobs = commit.stoppedJobs
        func share<Requests: RequestSource>(_ number: Int, _ requests: Requests) -> Sender.Share<Requests> {
            Sender.Share(
                requests: requests, range: 0..<requests.count,
                stop: StopFlag(job: units[number].small.job.key, registry: stoppedJobs),
                publishedAt: units[number].unit.publishedAt)
        }
        return await withTaskGroup(of: [(Int, [DeviceResult])].self) { [sender] group in
            for (client, numbers) in apple.values {
                let shares = numbers.map { share($0, units[$0].apns!.requests) }
                group.addTask { Array(zip(numbers, await sender.sendProbingFirst(shares, through: client))) }
            }
            for (client, numbers) in android.values {
                let shares = numbers.map { share($0, units[$0].fcm!.requests) }
                group.addTask { Array(zip(numbers, await sender.sendProbingFirst(shares, through: client))) }
            }
            var collected = units.map(\.unsent)
            for await done in group {
                for (number, result) in done { collected[number] += result }
            }
            return collected
        }
    }
}
