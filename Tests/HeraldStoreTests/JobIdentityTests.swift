import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// A job is (app, id): one app's id never touches another app's job. Planning a job is exclusive across sessions,
/// an enqueue is atomic, and a badge job increments each device's badge once.
@Suite(.needsServices) struct JobIdentityTests {
    static func job(_ id: String, app: String, target: String = #"{"all": true}"#) throws -> PreparedJob {
        try PreparedJob.decode(
            Array(#"{"id":"\#(id)","app":"\#(app)","target":\#(target),"notification":{"aps":{"alert":"x"}}}"#.utf8)
        ) { "" }
    }

    static func spec(_ job: PreparedJob) throws -> String {
        String(decoding: try JSONEncoder().encode(job.spec), as: UTF8.self)
    }

    @Test func anotherAppsFinishedJobWithTheSameIdIsNeitherADuplicateNorVisible() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            // App B pre-registers "order-42" and finishes it.
            let theirs = try Self.job("order-42", app: "b")
            #expect(
                try await store.register(theirs, spec: Self.spec(theirs), publishedAt: nil)
                    == .plan(
                        cursor: nil, nextSeq: 0, planned: false))
            try await store.finishJob(theirs.key, state: .done)

            // App A's own "order-42" is a new job, planned from the start.
            let mine = try Self.job("order-42", app: "a")
            #expect(
                try await store.register(mine, spec: Self.spec(mine), publishedAt: nil)
                    == .plan(
                        cursor: nil, nextSeq: 0, planned: false))
            #expect(try await store.job(app: "a", id: "order-42")?.state == .running)
            #expect(try await store.job(app: "b", id: "order-42")?.state == .done)
            #expect(try await store.jobs(id: "order-42").map(\.app) == ["a", "b"])
            #expect(try await store.onlyApp(ofJob: "order-42") == nil)  // ambiguous: a legacy batch is not guessed

            // Cancelling, failing and batches are per app.
            #expect(try await store.cancelJob(JobKey(app: "c", id: "order-42")) == nil)
            #expect(try await store.failJob(theirs.key, reason: "x") == false)  // B's is final already
            let batch = BatchKey(app: "a", job: "order-42", seq: 0, attempt: 1)
            guard case .deliver = try await store.beginBatch(batch) else {
                Issue.record("app A's batch is not delivered")
                return
            }
            #expect(try await store.beginBatch(BatchKey(app: "c", job: "order-42", seq: 0, attempt: 1)) == .unknownJob)
            #expect(try await store.cancelJob(mine.key) == .running)
            #expect(try await store.job(app: "b", id: "order-42")?.state == .done)
        }
    }

    @Test func aSmallJobIsClaimedInItsAppWhateverAnotherAppDidWithItsId() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            #expect(try await store.startJob(id: "order-42", app: "b", targetKind: "tokens") == nil)
            let keys = [JobKey(app: "a", id: "order-42"), JobKey(app: "b", id: "order-42")]
            let claim = try await store.claimSmallJobs(keys) { claimed in (claimed, []) }
            guard case .delivered(let claimed) = claim else {
                Issue.record("the claim was not made")
                return
            }
            #expect(claimed == [JobKey(app: "a", id: "order-42")])
        }
    }

    @Test func concurrentEnqueuesOfOneIdCreateItOnce() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let job = try Self.job("key-1", app: "a")
            let spec = try Self.spec(job)
            let results = try await withThrowingTaskGroup(of: EnqueueResult.self) { group in
                for _ in 0..<8 { group.addTask { try await store.enqueue(job, spec: spec) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0 == .created(.queued) }.count == 1)
            #expect(results.filter { $0 == .existing(sameSpec: true, state: .queued) }.count == 7)
            // Another app's same key is its own job.
            let other = try Self.job("key-1", app: "b")
            #expect(try await store.enqueue(other, spec: Self.spec(other)) == .created(.queued))
        }
    }

    @Test func aPlanningClaimIsExclusiveAcrossSessionsAndWithinOne() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let first = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let second = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let job = JobKey(app: "a", id: "broadcast")
            let inner = try await first.withClaim(on: job) {
                // Held: neither another session nor this one claims it, but another app's same id is free.
                let other = try await second.withClaim(on: job) { true }
                let same = try await first.withClaim(on: job) { true }
                let otherApp = try await second.withClaim(on: JobKey(app: "b", id: "broadcast")) { true }
                return (other, same, otherApp)
            }
            #expect(inner?.0 == nil)
            #expect(inner?.1 == nil)
            #expect(inner?.2 == true)
            // Released when the body returns, and when it throws.
            #expect(try await second.withClaim(on: job) { 1 } == 1)
            struct Failure: Error {}
            await #expect(throws: Failure.self) { _ = try await first.withClaim(on: job) { throw Failure() } }
            #expect(try await second.withClaim(on: job) { 2 } == 2)
            await first.close()
            await second.close()
        }
    }

    /// `order-101687` and `order-86052` of `com.example.news` share the 32-bit key of before schemas/027 (checked
    /// here, so that the pair keeps testing a collision): with that key, one's planning claim held the other off.
    @Test func idsWhoseThirtyTwoBitKeysCollideAreClaimedApart() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let app = "com.example.news"
            let (a, b) = (JobKey(app: app, id: "order-101687"), JobKey(app: app, id: "order-86052"))
            let rows = try await store.client.query(
                """
                SELECT herald_job_lock_key(\(a.app), \(a.id)) = herald_job_lock_key(\(b.app), \(b.id)),
                       herald_job_lock_key(1, \(a.app), \(a.id)) = herald_job_lock_key(1, \(b.app), \(b.id))
                """,
                logger: Logger(label: "t"))
            for try await (old, new) in rows.decode((Bool, Bool).self) {
                #expect(old, "the pair must collide under the 32-bit hashtext key")
                #expect(!new)
            }
            let first = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let second = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let both = try await first.withClaim(on: a) { try await second.withClaim(on: b) { true } }
            #expect(both == true)
            await first.close()
            await second.close()
        }
    }

    @Test func aClaimOfAPlannerWhoseSessionDiedIsTakenOverByAWaitingRedelivery() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let dying = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let survivor = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let job = JobKey(app: "a", id: "broadcast")
            let held = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let planner = Task {
                try await dying.withClaim(on: job) {
                    held.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in held.stream { break }
            // A copy that is not redelivered does not wait: the holder is alive.
            #expect(try await survivor.withClaim(on: job) { true } == nil)
            // The holder's session ends (its worker died): a redelivered copy waiting for the claim gets it.
            let redelivered = Task { try await survivor.withClaim(on: job, wait: .seconds(60)) { true } }
            await dying.close()
            #expect(try await redelivered.value == true)
            release.continuation.finish()
            _ = try? await planner.value
            await survivor.close()
        }
    }

    @Test func aRedeliveredCopyInTheHoldersProcessWaitsForItsPlannerAndThenResumes() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let claims = try PlanningClaims(database: database, logger: Logger(label: "t"))
            let job = JobKey(app: "a", id: "broadcast")
            let held = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let planner = Task {
                try await claims.withClaim(on: job) {
                    held.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in held.stream { break }
            #expect(try await claims.withClaim(on: job) { true } == nil)
            // The planner's own copy back through a broker reconnection: it waits, and claims once the planner
            // let go (here: it failed).
            let redelivered = Task { try await claims.withClaim(on: job, wait: .seconds(60)) { true } }
            release.continuation.finish()
            _ = try await planner.value
            #expect(try await redelivered.value == true)
            await claims.close()
        }
    }

    @Test func badgesCountOncePerDevicePerJobAndNeverOverflow() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let tokens = (0..<3).map { StoreTests.token($0) }
            _ = try await store.importDevices(tokens.map { DeviceRecord(token: $0) }, app: "a")
            let first = JobKey(app: "a", id: "badge-1")
            let hex = Set(tokens.map(\.hex))
            // Concurrent deliveries of one job's batch (a redelivery racing the first): one increment each.
            let concurrent = try await withThrowingTaskGroup(of: [String: Int].self) { group in
                for _ in 0..<4 { group.addTask { try await store.incrementBadges(job: first, tokens: tokens, by: 1) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for badges in concurrent { #expect(badges == Dictionary(uniqueKeysWithValues: hex.map { ($0, 1) })) }
            // A retry batch of two of the devices reads the same badge.
            #expect(
                try await store.incrementBadges(job: first, tokens: Array(tokens.prefix(2)), by: 1).values.sorted()
                    == [1, 1])
            #expect(try await store.device(app: "a", token: tokens[0])?.badge == 1)
            // Another job increments again; an increment past the column's range is clamped, not an error.
            let second = JobKey(app: "a", id: "badge-2")
            #expect(try await store.incrementBadges(job: second, tokens: tokens, by: 1)[tokens[0].hex] == 2)
            let huge = JobKey(app: "a", id: "badge-huge")
            #expect(
                try await store.incrementBadges(job: huge, tokens: tokens, by: Int.max)[tokens[0].hex]
                    == 2_147_483_647)
            let down = JobKey(app: "a", id: "badge-down")
            #expect(try await store.incrementBadges(job: down, tokens: tokens, by: Int.min)[tokens[0].hex] == 0)
            // Another app's device with the same token is not touched.
            _ = try await store.importDevices([DeviceRecord(token: tokens[0])], app: "b")
            #expect(try await store.device(app: "b", token: tokens[0])?.badge == 0)
        }
    }
}
