import APNSCore
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
            var unit = DeliveryUnit(
                job: job, batch: DeliveryUnit.firstBatch(of: job), publishedAt: small.publishedAt ?? receivedAt,
                devices: small.tokens.count)
            if DeliveryUnit.isExpired(job, now: now) {
                tally.merge(unit.expire(devices: small.tokens.count), uniquingKeysWith: +)
                sent.rows.append(row(small, done: unit.writeBack))
                continue
            }
            let requests = RequestList(job: job, bundleID: lease.app.topic, tokens: small.tokens, payloads: nil)
            units.append(Unit(small: small, unit: unit, client: lease.standard, requests: requests))
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

    /// A small job's unit in a group, with the client and the requests it is sent with.
    private struct Unit: Sendable {
        let small: RoutedJob
        let unit: DeliveryUnit
        let client: any NotificationTransport<APNSRequest>
        let requests: RequestList
    }

    /// Commits what a group's send left running, once the group's rows are written (`Commit.finishGroup`).
    func finishGroup(_ sent: SentGroup) async throws -> [JobKey: DeliveryOutcome] {
        try await commit.finishGroup(sent)
    }

    /// Sends every unit's requests at once, one transport batch per APNs client, up to `sendConcurrency` in flight
    /// in all; each unit's first request goes alone (`Sender.sendProbingFirst`). Returns each unit's results.
    private func send(_ units: [Unit]) async -> [[DeviceResult]] {
        var byClient: [ObjectIdentifier: (client: any NotificationTransport<APNSRequest>, units: [Int])] = [:]
        for (number, unit) in units.enumerated() {
            byClient[ObjectIdentifier(unit.client), default: (unit.client, [])].units.append(number)
        }
        var sender = self.sender
        sender.concurrency = max(1, configuration.sendConcurrency / max(1, byClient.count))
        let stoppedJobs = commit.stoppedJobs
        return await withTaskGroup(of: [(Int, [DeviceResult])].self) { [sender] group in
            for (client, numbers) in byClient.values {
                let shares = numbers.map { number in
                    let requests = units[number].requests
                    return Sender.Share(
                        requests: requests, range: 0..<requests.count,
                        stop: StopFlag(job: units[number].small.job.key, registry: stoppedJobs),
                        publishedAt: units[number].unit.publishedAt)
                }
                group.addTask {
                    let results = await sender.sendProbingFirst(shares, through: client)
                    return Array(zip(numbers, results))
                }
            }
            var collected = [[DeviceResult]](repeating: [], count: units.count)
            for await done in group {
                for (number, result) in done { collected[number] = result }
            }
            return collected
        }
    }
}
