import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Logging
import Testing

/// The planning claim (issue 32): ids whose keys collide are planned apart, and a job is never acknowledged as
/// "being planned by another worker" unless its row exists.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct PlanningClaimTests {
    /// Twenty pairs of ids whose 32-bit claim keys (before schemas/027) collide, found by PostgreSQL's own
    /// `hashtext` among `order-1` … `order-700000` of the harness's app: each pair published at once to two workers.
    /// With the 32-bit key one job of every pair was acknowledged with no row and never sent (issue 32: 20 of 20).
    @Test func twentyPairsOfIdsWhoseOldKeysCollidePublishedAtOnceToTwoWorkersAreAllDelivered() async throws {
        try await WorkerHarness.with { harness in
            let pairs = try await Self.collidingPairs(count: 20, app: WorkerHarness.app, harness: harness)
            #expect(pairs.count == 20)
            let devices = try await harness.importDevices(count: 100)
            let workers = [
                try harness.startWorker { $0.batchSize = 20 }, try harness.startWorker { $0.batchSize = 20 },
            ]
            let ids = Set(pairs.flatMap { [$0.0, $0.1] })
            for (a, b) in pairs {
                try await harness.publish(WorkerHarness.broadcast(id: a))
                try await harness.publish(WorkerHarness.broadcast(id: b))
            }
            await harness.waitUntilFinished(ids, in: .done)
            for worker in workers { try await worker.stop() }
            for id in ids {
                #expect(harness.received(job: id).count == devices.count, "\(id)")
                #expect(try await harness.job(id)?.counters == JobCounters(targeted: 100, sent: 100))
            }
        }
    }

    /// Pairs of `order-N` ids of `app` whose old 32-bit claim keys (`herald_job_lock_key(app, id)`) are equal while
    /// their 64-bit keys are not, so that each pair keeps testing a collision.
    static func collidingPairs(count: Int, app: String, harness: WorkerHarness) async throws -> [(String, String)] {
        let rows = try await harness.store.client.query(
            """
            SELECT min(id), max(id) FROM (
                SELECT 'order-' || n AS id, herald_job_lock_key(\(app), 'order-' || n) AS old
                FROM generate_series(1, 700000) AS n) AS k
            GROUP BY old HAVING count(*) = 2
               AND herald_job_lock_key(1, \(app), min(id)) <> herald_job_lock_key(1, \(app), max(id))
            ORDER BY min(id) LIMIT \(count)
            """,
            logger: Logger(label: "pairs"))
        var pairs: [(String, String)] = []
        for try await (a, b) in rows.decode((String, String).self) { pairs.append((a, b)) }
        return pairs
    }

    /// A claim held by someone who has not registered the job (a planner a moment before its insert, or another job
    /// whose key collides): the copy waits for the claim instead of being acknowledged with nothing recorded.
    @Test func aJobWhoseClaimIsHeldWhileItHasNoRowWaitsForTheClaimAndIsThenDelivered() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 3)
            let holder = try PlanningClaims(database: harness.database, logger: Logger(label: "holder"))
            let key = JobKey(app: WorkerHarness.app, id: "held")
            let held = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let holding = Task {
                try await holder.withClaim(on: key) {
                    held.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in held.stream { break }
            let worker = try harness.startWorker()
            try await harness.publish(WorkerHarness.broadcast(id: "held"))
            let waiting = "job's planning claim is held but the job has no row yet, waiting for the claim"
            while harness.logs.count(of: waiting) == 0 { await Task.yield() }
            #expect(try await harness.job("held") == nil)
            #expect(!harness.events.events.contains { if case .duplicate(_, "held", _) = $0 { true } else { false } })
            release.continuation.finish()
            _ = try await holding.value
            #expect(await harness.waitUntilFinished("held") == .done)
            try await worker.stop()
            #expect(harness.received(job: "held").count == devices.count)
            await holder.close()
        }
    }
}
