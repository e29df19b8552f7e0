import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// Integration tests against the PostgreSQL that `make test` starts; each test gets a fresh migrated database.
@Suite(.needsServices) struct StoreTests {
    static func token(_ n: Int, prefix: String = "a1") -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: prefix + String(repeating: "0", count: 62 - hex.count) + hex)
    }

    /// A job of app "a", where most tests put their jobs.
    static func key(_ id: String) -> JobKey { JobKey(app: "a", id: id) }

    @Test func migrationsApplyOnceAndAreRecorded() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let migrations = try Migration.load(from: TestServices.schemasDirectory)
            #expect(!migrations.isEmpty)
            #expect(try await store.migrate(migrations).isEmpty)
            let rows = try await store.client.query(
                "SELECT count(*)::bigint FROM herald_migrations", logger: .init(label: "t"))
            var count: Int64 = 0
            for try await n in rows.decode(Int64.self) { count = n }
            #expect(count == Int64(migrations.count))
        }
    }

    @Test func importUpsertsAndKeepsSQLLookingStringsVerbatim() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let nasty = "robert'); DROP TABLE devices;--\t\\N\n"
            let devices = [
                DeviceRecord(token: Self.token(1), userID: nasty, locale: "en", topics: ["sports", "a,b", "q\"uote"]),
                DeviceRecord(token: Self.token(2), userID: "u2", locale: nil, topics: []),
                DeviceRecord(token: Self.token(2), userID: "u2-again", locale: "fr", topics: ["news"]),
            ]
            #expect(try await store.importDevices(devices, app: "app") == 2)
            #expect(try await store.importDevices([devices[0]], app: "app") == 1)
            #expect(try await store.deviceCount(app: "app") == 2)
            let byUser = try await store.devicesPage(app: "app", filter: .users([nasty]), after: nil, limit: 10)
            #expect(byUser.map(\.token) == [Self.token(1)])
            let byTopic = try await store.devicesPage(app: "app", filter: .topic("a,b"), after: nil, limit: 10)
            #expect(byTopic.map(\.token) == [Self.token(1)])
            let news = try await store.devicesPage(app: "app", filter: .topic("news"), after: nil, limit: 10)
            #expect(news.map(\.token) == [Self.token(2)])
            #expect(news.first?.locale == "fr")
            #expect(try await store.deviceCount(app: "other") == 0)
        }
    }

    @Test func keysetPagesWalkEveryDeviceOnceInTokenOrder() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let devices = (0..<2_500).map { DeviceRecord(token: Self.token($0), topics: $0 % 2 == 0 ? ["even"] : []) }
            _ = try await store.importDevices(devices, app: "app")
            var seen: [DeviceToken] = []
            var cursor: String? = nil
            var pages = 0
            while true {
                let page = try await store.devicesPage(app: "app", filter: .all, after: cursor, limit: 1000)
                if page.isEmpty { break }
                pages += 1
                seen += page.map(\.token)
                cursor = page.last?.token.hex
            }
            #expect(pages == 3)
            #expect(seen == devices.map(\.token).sorted { $0.hex < $1.hex })
            let even = try await store.devicesPage(app: "app", filter: .topic("even"), after: nil, limit: 5000)
            #expect(even.count == 1_250)
        }
    }

    @Test func pagesOfEveryAudienceHoldItsDevicesInTokenOrderBetweenTheirBounds() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let locales = ["fr", "fr-CA", "FR_ca", "fro", "en", nil]
            let devices = (0..<60).map {
                DeviceRecord(
                    token: Self.token($0), userID: "u\($0 % 3)", locale: locales[$0 % locales.count],
                    topics: $0 % 2 == 0 ? ["news"] : [])
            }
            _ = try await store.importDevices(devices, app: "app")
            _ = try await store.importDevices([DeviceRecord(token: Self.token(61), userID: "u1")], app: "other")
            func tokens(_ filter: DeviceFilter, after: Int? = nil, through: Int? = nil, limit: Int = 100)
                async throws -> [Int]
            {
                try await store.devicesPage(
                    app: "app", filter: filter, after: after.map { Self.token($0).hex },
                    through: through.map { Self.token($0).hex }, limit: limit
                ).map { device in devices.firstIndex { $0.token == device.token }! }
            }
            #expect(try await tokens(.all, after: 9, through: 14) == Array(10...14))
            #expect(try await tokens(.all, after: 9, limit: 3) == [10, 11, 12])
            #expect(try await tokens(.topic("news"), after: 50) == [52, 54, 56, 58])
            #expect(try await tokens(.topic("news"), through: 6) == [0, 2, 4, 6])
            // `fr` covers fr, fr-CA and fr_CA in any case, not fro.
            #expect(try await tokens(.locales(.all, ["fr"]), through: 11) == [0, 1, 2, 6, 7, 8])
            #expect(try await tokens(.locales(.topic("news"), ["fr-ca", "en"]), through: 11) == [2, 4, 8, 10])
            // A user listed twice counts once; the users' devices come in token order across them.
            #expect(try await tokens(.users(["u1", "u2", "u1"]), after: 3, through: 10) == [4, 5, 7, 8, 10])
            #expect(try await tokens(.users(["u1", "u2"]), after: 3, limit: 3) == [4, 5, 7])
            #expect(try await tokens(.locales(.users(["u0"]), ["fr"]), through: 20) == [0, 6, 12, 18])
            let boundary = try await store.devicesPageBoundary(
                app: "app", filter: .topic("news"), after: Self.token(40).hex, limit: 5)
            #expect(boundary.count == 5)
            #expect(boundary.last == Self.token(50).hex)
            let details = try await store.devicesPage(
                app: "app", filter: .all, after: nil, through: Self.token(1).hex, limit: 10)
            #expect(details.map(\.locale) == ["fr", "fr-CA"])
            #expect(details.allSatisfy { $0.registeredAt > 1_700_000_000_000_000 })
        }
    }

    @Test func pruningFollowsThe410TimestampRuleAndRecordsDeadTokens() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let devices = (0..<4).map { DeviceRecord(token: Self.token($0)) }
            _ = try await store.importDevices(devices, app: "app")
            _ = try await store.startJob(id: "job-1", app: "app", targetKind: "tokens")
            let registered = try await store.devices(app: "app", tokens: devices.map(\.token))
            let registeredMillis = (registered.map(\.registeredAt).max() ?? 0) / 1000

            var writeBack = WriteBack(jobID: "job-1", app: "app")
            writeBack.targeted = 4
            writeBack.sent = 1
            writeBack.prunes = [
                // APNs saw it die after it registered: pruned.
                .init(token: Self.token(0), reason: "Unregistered", apnsTimestamp: registeredMillis + 60_000),
                // It registered again after APNs saw it die: kept.
                .init(token: Self.token(1), reason: "Unregistered", apnsTimestamp: registeredMillis - 60_000),
                // BadDeviceToken carries no timestamp: pruned.
                .init(token: Self.token(2), reason: "BadDeviceToken", apnsTimestamp: nil),
            ]
            #expect(try await store.write(writeBack) == 2)
            #expect(try await store.deviceCount(app: "app") == 2)
            let dead = try await store.deadTokens(app: "app")
            #expect(Set(dead.map(\.token)) == [Self.token(0), Self.token(2)])
            #expect(dead.allSatisfy { $0.jobID == "job-1" })

            let job = try #require(try await store.job(app: "app", id: "job-1"))
            #expect(job.counters == JobCounters(targeted: 4, sent: 1, pruned: 2, failed: 1))
        }
    }

    @Test func aFinishedJobIsNotStartedAgain() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            #expect(try await store.startJob(id: "j", app: "a", targetKind: "all") == nil)
            // A redelivery while running resumes it.
            #expect(try await store.startJob(id: "j", app: "a", targetKind: "all") == nil)
            try await store.finishJob(Self.key("j"), state: .done)
            #expect(try await store.startJob(id: "j", app: "a", targetKind: "all") == .done)
            #expect(try await store.job(app: "a", id: "j")?.state == .done)
        }
    }

    /// Small jobs left running by their group (`claimSmallJobs` with no counts), as a group with exceptions leaves
    /// them.
    static func startRunning(_ ids: [String], in store: Store) async throws {
        let spec = #"{"app":"a","target":{"tokens":["aa"]},"notification":{"aps":{"alert":"hi"}}}"#
        let claim = try await store.claimSmallJobs(ids.map(key)) { claimed in
            (
                (),
                claimed.map {
                    SmallJobRow(id: $0.id, app: $0.app, spec: spec, publishedAt: 0, tokenCount: 1, done: nil)
                }
            )
        }
        guard case .delivered = claim else { throw StoreError(.queryFailed, "the claim was not made") }
    }

    @Test func smallJobsAreClaimedOnlyWhenNewOrEnqueuedAndWrittenOnceWhenSent() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let spec = #"{"app":"a","target":{"tokens":["aa"]},"notification":{"aps":{"alert":"hi"}}}"#
            @Sendable func job(_ id: String) throws -> PreparedJob {
                try PreparedJob.decode(
                    Array(
                        #"{"id":"\#(id)","app":"a","target":{"tokens":["aa"]},"notification":{"aps":{"alert":"hi"}}}"#
                            .utf8)
                ) { "" }
            }
            @Sendable func row(_ id: String, sent: Int?) -> SmallJobRow {
                SmallJobRow(
                    id: id, app: "a", spec: spec, publishedAt: 1_700_000_000_000, tokenCount: 1,
                    done: sent.map { sent in
                        var writeBack = WriteBack(jobID: id, app: "a")
                        writeBack.targeted = 1
                        writeBack.sent = sent
                        return writeBack
                    })
            }
            #expect(try await store.startJob(id: "running", app: "a", targetKind: "tokens") == nil)
            #expect(try await store.enqueue(try job("enqueued"), spec: spec) == .created(.queued))

            // New ids and the one the API enqueued are claimed; the running one is not.
            typealias Held = (claimedAll: Bool, registering: Task<JobRegistration, any Error>?)
            let claim = try await store.claimSmallJobs(
                ["new-1", "running", "enqueued", "new-2", "new-1"].map(Self.key)
            ) {
                claimed -> (Held, [SmallJobRow]) in
                #expect(claimed == Set(["new-1", "new-2", "enqueued"].map(Self.key)))
                // While the group sends, its ids are held: another group claims none of them, and nothing is
                // written yet.
                let other = try await store.claimSmallJobs(["new-1", "enqueued", "new-3"].map(Self.key)) { ($0, []) }
                guard case .delivered(let second) = other else {
                    Issue.record("the second claim was not made")
                    return ((false, nil), [])
                }
                #expect(second == [Self.key("new-3")])
                #expect(try await store.job(app: "a", id: "new-1") == nil)
                // A registration of a held id (the one-by-one path) waits for the group to write it.
                let registering = Task { try await store.register(try job("new-1"), spec: spec, publishedAt: nil) }
                try await Self.waitForAdvisoryLockWaiter(store)
                return (
                    (true, registering), [row("new-1", sent: 1), row("enqueued", sent: 0), row("new-2", sent: nil)]
                )
            }
            guard case .delivered(let (claimedAll, registering)) = claim, claimedAll, let registering else {
                Issue.record("the claim was not made")
                return
            }
            // The waiting registration saw the group's row: a duplicate, not a second send.
            #expect(try await registering.value == .duplicate(.done))
            #expect(try await store.job(app: "a", id: "new-1")?.state == .done)
            #expect(try await store.job(app: "a", id: "new-1")?.counters == JobCounters(targeted: 1, sent: 1))
            #expect(try await store.job(app: "a", id: "enqueued")?.state == .done)
            // The job left running has its one batch pending, and its spec for that batch.
            #expect(try await store.job(app: "a", id: "new-2")?.state == .running)
            guard
                case .deliver(_, let publishedAt, nil, _) = try await store.beginBatch(
                    BatchKey(app: "a", job: "new-2", seq: 0, attempt: 1))
            else {
                Issue.record("the running job's batch is not pending")
                return
            }
            #expect(publishedAt == 1_700_000_000_000)
            // Written ids are not claimed again.
            let again = try await store.claimSmallJobs(["new-1", "new-2", "enqueued"].map(Self.key)) { ($0, []) }
            guard case .delivered(let none) = again else {
                Issue.record("the third claim was not made")
                return
            }
            #expect(none.isEmpty)
        }
    }

    /// Waits until a session waits for an advisory lock (a registration held by a claim).
    static func waitForAdvisoryLockWaiter(_ store: Store) async throws {
        for _ in 0..<1000 {
            let rows = try await store.client.query(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", logger: Logger(label: "t"))
            for try await waiting in rows.decode(Int.self) where waiting > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no registration waited for the claim")
    }

    @Test func aSmallJobAPNsRejectedStaysFailedWithItsCountsAndOneARedeliveryTookOverIsLeftToIt() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await Self.startRunning(["s1", "s2"], in: store)
            #expect(try await store.failJob(Self.key("s1"), reason: "APNs rejected the job: BadTopic"))
            // s2 was redelivered meanwhile: the one-by-one path created its batch row and owns its completion.
            #expect(try await store.beginBatch(BatchKey(app: "a", job: "s2", seq: 0, attempt: 1)) != .unknownJob)

            func counts(_ job: String) -> BatchCompletion {
                var writeBack = WriteBack(jobID: job, app: "a")
                writeBack.targeted = 1
                writeBack.rejectedTokens = 1
                return BatchCompletion(
                    key: BatchKey(app: "a", job: job, seq: 0, attempt: 1), writeBack: writeBack, retry: nil)
            }
            let completed = try await store.completeSmallJobs([counts("s1"), counts("s2")])
            // s1's counts are written, but this call did not finish it (failJob did): no second "finished".
            #expect(completed.pruned.keys.map(\.job) == ["s1"])
            #expect(completed.finished.isEmpty)
            #expect(try await store.job(app: "a", id: "s1")?.state == .failed)
            #expect(try await store.job(app: "a", id: "s1")?.counters == JobCounters(targeted: 1, failed: 1))
            #expect(try await store.job(app: "a", id: "s2")?.state == .running)
            #expect(try await store.job(app: "a", id: "s2")?.counters == JobCounters())
        }
    }

    @Test func manyBatchesCompleteInOneTransactionClaimingOnlyPendingOnesAndFinishingTheirJobs() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let ids = ["j1", "j2", "j3", "j4"]
            try await Self.startRunning(ids, in: store)
            _ = try await store.importDevices([DeviceRecord(token: Self.token(1))], app: "a")

            func completion(_ job: String, retry: Bool = false, _ adjust: (inout WriteBack) -> Void = { _ in })
                -> BatchCompletion
            {
                var writeBack = WriteBack(jobID: job, app: "a")
                writeBack.targeted = 1
                writeBack.sent = 1
                adjust(&writeBack)
                return BatchCompletion(
                    key: BatchKey(app: "a", job: job, seq: 0, attempt: 1), writeBack: writeBack,
                    retry: retry ? BatchKey(app: "a", job: job, seq: 0, attempt: 2) : nil
                )
            }
            // j1 and j2 only counts; j3 a dead token (the full write-back); j4 a transient failure sent to retry.
            // A copy of j1 taking the one-by-one path while the group is in flight must not finish it: a started
            // small job has a batch but no batch row, so only its own completion finishes it.
            #expect(try await store.finishPlanning(job: Self.key("j1")) == nil)
            #expect(try await store.job(app: "a", id: "j1")?.state == .running)

            let first = try await store.completeSmallJobs([
                completion("j1"),
                completion("j2") {
                    $0.rejectedTokens = 2
                    $0.targeted = 3
                },
                completion("j3") { writeBack in
                    writeBack.sent = 0
                    writeBack.prunes = [.init(token: Self.token(1), reason: "BadDeviceToken", apnsTimestamp: nil)]
                },
                completion("j4", retry: true) { writeBack in
                    writeBack.sent = 0
                    writeBack.retried = 1
                },
            ])
            #expect(Set(first.pruned.keys.map(\.job)) == Set(ids))
            #expect(first.pruned[BatchKey(app: "a", job: "j3", seq: 0, attempt: 1)] == 1)
            #expect(first.finished == [Self.key("j1"): .done, Self.key("j2"): .done, Self.key("j3"): .done])
            #expect(try await store.job(app: "a", id: "j2")?.counters == JobCounters(targeted: 3, sent: 1, failed: 2))
            #expect(try await store.job(app: "a", id: "j3")?.counters == JobCounters(targeted: 1, pruned: 1))
            #expect(try await store.job(app: "a", id: "j4")?.state == .running)  // its retry batch is pending

            // A second completion of the same batches writes nothing; the retry batch finishes j4.
            let again = try await store.completeSmallJobs([completion("j1"), completion("j4")])
            #expect(again.pruned.isEmpty && again.finished.isEmpty)
            #expect(try await store.job(app: "a", id: "j1")?.counters.sent == 1)
            let retried = try await store.complete([
                BatchCompletion(
                    key: BatchKey(app: "a", job: "j4", seq: 0, attempt: 2),
                    writeBack: {
                        var w = WriteBack(jobID: "j4", app: "a")
                        w.sent = 1
                        return w
                    }(), retry: nil)
            ])
            #expect(retried.finished == [Self.key("j4"): .done])
            #expect(try await store.job(app: "a", id: "j4")?.counters == JobCounters(targeted: 1, sent: 1, retried: 1))

            // Purging finished jobs takes their batches with them.
            #expect(try await store.purgeFinishedJobs(olderThanSeconds: -60) == 4)
            let rows = try await store.client.query("SELECT count(*)::bigint FROM batches", logger: .init(label: "t"))
            for try await count in rows.decode(Int64.self) { #expect(count == 0) }
        }
    }

    @Test func aJobWhoseLastBatchesCompleteAtOnceFinishes() async throws {
        // Two workers completing a job's last two batches at the same moment: whichever commits second must see
        // the other's batch done. Repeated, because the interleaving is up to the scheduler.
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for round in 0..<40 {
                let job = "race-\(round)"
                #expect(try await store.startJob(id: job, app: "a", targetKind: "all") == nil)
                let keys = [
                    BatchKey(app: "a", job: job, seq: 0, attempt: 1), BatchKey(app: "a", job: job, seq: 1, attempt: 1),
                ]
                for key in keys { _ = try await store.beginBatch(key) }
                #expect(try await store.finishPlanning(job: Self.key(job)) == nil)
                let finished = try await withThrowingTaskGroup(of: JobState?.self) { group in
                    for key in keys {
                        group.addTask {
                            var writeBack = WriteBack(jobID: job, app: "a")
                            writeBack.sent = 1
                            return try await store.complete(key, with: writeBack, retry: nil)?.jobFinished
                        }
                    }
                    return try await group.reduce(into: [JobState]()) { if let state = $1 { $0.append(state) } }
                }
                #expect(finished == [.done], "round \(round)")
                #expect(try await store.job(app: "a", id: job)?.state == .done, "round \(round)")
            }
        }
    }

    @Test func databaseURLsParseAndNeverShowThePassword() throws {
        let configuration = try DatabaseConfiguration(
            url: "postgres://user:s%40cret@db.example:6543/herald?sslmode=require")
        #expect(configuration.host == "db.example")
        #expect(configuration.port == 6543)
        #expect(configuration.password == "s@cret")
        #expect(configuration.tlsMode == .require)
        #expect(!"\(configuration)".contains("cret"))
        #expect(throws: StoreError.self) { try DatabaseConfiguration(url: "mysql://x@y/z") }
        #expect(throws: StoreError.self) { try DatabaseConfiguration(url: "postgres://x@y") }
    }
}

@Suite(.needsServices) struct SQLScriptTests {
    @Test func migrationsSplitIntoStatements() throws {
        let migrations = try Migration.load(from: TestServices.schemasDirectory)
        #expect(migrations.first?.version == 1)
    }
}
