import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Logging
import Testing

/// The planning claim (issue 32): ids whose keys collide are planned apart, and a job is never acknowledged as
/// "being planned by another worker" unless its row exists.
@Suite(.timeLimit(.minutes(3))) struct PlanningClaimTests {
    /// `order-101687` and `order-86052` shared a 32-bit claim key (HeraldStoreTests checks that they do): published
    /// at once to two workers, one of the two was acknowledged with no row and never sent.
    @Test func idsWhoseOldKeysCollidePublishedAtOnceToTwoWorkersAreBothDelivered() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 100)
            let workers = [
                try harness.startWorker { $0.batchSize = 20 }, try harness.startWorker { $0.batchSize = 20 },
            ]
            let ids: Set = ["order-101687", "order-86052"]
            for id in ids.sorted() { try await harness.publish(WorkerHarness.broadcast(id: id)) }
            await harness.waitUntilFinished(ids, in: .done)
            for worker in workers { try await worker.stop() }
            for id in ids {
                #expect(harness.received(job: id).count == devices.count)
                #expect(try await harness.job(id)?.counters == JobCounters(targeted: 100, sent: 100))
            }
        }
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
