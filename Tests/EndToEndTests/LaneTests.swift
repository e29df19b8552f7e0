import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Paced planning (`WorkerConfiguration.planAhead`): a large broadcast's batches do not all sit in the batches queue
/// in front of a later job's, so another app's broadcast gets through while the first still runs.
@Suite(.timeLimit(.minutes(5))) struct LaneTests {
    @Test func anotherAppsBroadcastGetsPastALargeBroadcastWhosePlanningIsPaced() async throws {
        try await WorkerHarness.with { harness in
            let large = try await harness.importDevices(count: 2_000)
            let small = try await harness.importDevices(count: 200, prefix: "cafe", app: WorkerHarness.otherApp)
            // One batch at a time, so the queue's order is the order of delivery. Without paced planning the large
            // broadcast's 20 batches are all queued before the small one's 2, and the small one finishes last.
            let worker = try harness.startWorker {
                $0.batchSize = 100
                $0.batchPrefetch = 1
                $0.planAhead = 4
                $0.schedulerInterval = .milliseconds(200)
            }
            try await harness.publish(WorkerHarness.broadcast(id: "large"))
            _ = await harness.events.wait { events in
                events.contains(.planningPaused(app: WorkerHarness.app, id: "large"))
            }
            try await harness.publish(WorkerHarness.broadcast(id: "small", app: WorkerHarness.otherApp))

            #expect(await harness.waitUntilFinished("small", app: WorkerHarness.otherApp) == .done)
            #expect(try await harness.job("large")?.state == .running)
            #expect(await harness.waitUntilFinished("large") == .done)

            // Paused and resumed as often as its window says, and still every device once.
            let pauses = harness.events.events.filter { $0 == .planningPaused(app: WorkerHarness.app, id: "large") }
            #expect(pauses.count == 4)  // 20 batches, 4 per pass: 5 passes
            let received = harness.received(job: "large")
            #expect(received.count == large.count && Set(received) == Set(large.map(\.token.hex)))
            #expect(Set(harness.received(job: "small", app: WorkerHarness.otherApp)) == Set(small.map(\.token.hex)))
            let counters = try #require(try await harness.job("large")?.counters)
            #expect(counters.targeted == large.count && counters.sent == large.count)
            try await worker.stop()
        }
    }
}
