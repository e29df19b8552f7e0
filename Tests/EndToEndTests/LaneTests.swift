import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Paced planning (`WorkerConfiguration.planAhead`): a large broadcast's batches do not all sit in the batches queue
/// in front of a later job's, so another app's broadcast gets through while the first still runs.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct LaneTests {
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

    /// Within the queue, a notification at apns-priority 10 is taken before ones at 5 queued ahead of it
    /// (`Job.brokerPriority`, `Topology.maximumPriority`).
    @Test func anImmediateJobIsTakenBeforePowerAwareJobsQueuedAheadOfIt() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 6)
            func job(_ id: String, device: Int, priority: Int?) -> Job {
                Job(
                    id: id, app: WorkerHarness.app, target: .tokens([devices[device].token.hex]),
                    notification: JobNotification(
                        priority: priority, aps: ["alert": "hi"], custom: ["job": .string(id)]))
            }
            // Queued while no worker consumes: five at priority 5, then one at APNs' default, 10.
            let later = (0..<5).map { "later-\($0)" }
            for (n, id) in later.enumerated() { try await harness.publish(job(id, device: n, priority: 5)) }
            try await harness.publish(job("now", device: 5, priority: nil))

            // One message in hand at a time, so the order in which they finish is the order the queue gave them.
            let worker = try harness.startWorker { $0.prefetch = 1 }
            await harness.waitUntilFinished(Set(later + ["now"]), in: .done)
            let order = harness.events.events.compactMap { event -> String? in
                if case .finished(_, let id, _) = event { id } else { nil }
            }
            #expect(order == ["now"] + later)
            try await worker.stop()
        }
    }

    /// Issue 18's scenario: two workers; app A runs a 200,000-device broadcast and a job throttled to 4 per second;
    /// meanwhile app B's broadcast to 2,000 devices and its single-device jobs get through: they travel in the
    /// transactional lane, A's broadcast past its first batches in the bulk lane (`Job.brokerPriority`). The test
    /// asserts the order (all of B's work done while A's broadcast still runs, most of it still to send) and prints
    /// how long each of B's jobs took; then A's broadcast is cancelled.
    @Test func anotherAppsBroadcastAndSingleJobsGetThroughWhileAHugeBroadcastAndAThrottledJobRun() async throws {
        try await WorkerHarness.with { harness in
            let large = try await harness.importDevices(count: 200_000)
            let other = try await harness.importDevices(count: 2_000, prefix: "cafe", app: WorkerHarness.otherApp)
            let finishedAt = EventCollector<(id: String, at: ContinuousClock.Instant)>()
            let workers = try (0..<2).map { _ in
                try harness.startWorker { configuration in
                    // Batches of 1,000: A's 200 of them then outnumber the planning window (100), so its planning is
                    // paced as a larger broadcast's would be with the default 5,000 per batch.
                    configuration.batchSize = 1000
                    let record = configuration.onJobHandled
                    configuration.onJobHandled = { event in
                        record?(event)
                        if case .finished(_, let id, _) = event { finishedAt.record((id, .now)) }
                    }
                }
            }
            try await harness.publish(WorkerHarness.broadcast(id: "huge"))
            var slow = Job(
                id: "slow", app: WorkerHarness.app, target: .tokens(large.prefix(20).map(\.token.hex)),
                notification: JobNotification(aps: ["alert": "hi"], custom: ["job": "slow"]))
            slow.throttlePerSecond = 4
            try await harness.publish(slow)
            // A's broadcast is under way (its planning paced) before B's work is published.
            _ = await harness.events.wait { $0.contains(.planningPaused(app: WorkerHarness.app, id: "huge")) }

            let published = ContinuousClock.now
            try await harness.publish(WorkerHarness.broadcast(id: "b-broadcast", app: WorkerHarness.otherApp))
            let singles = (0..<10).map { "b-single-\($0)" }
            for (index, id) in singles.enumerated() {
                try await harness.publish(
                    Job(
                        id: id, app: WorkerHarness.otherApp, target: .tokens([other[index].token.hex]),
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string(id)])))
            }
            let bJobs = Set(singles + ["b-broadcast"])
            await harness.waitUntilFinished(bJobs, in: .done, app: WorkerHarness.otherApp)
            #expect(try await harness.job("huge")?.state == .running)

            let hugeSent = try #require(try await harness.job("huge")?.counters).sent
            let took = finishedAt.events.filter { bJobs.contains($0.id) }.map { ($0.id, $0.at - published) }
            for (id, duration) in took.sorted(by: { $0.1 < $1.1 }) {
                print("lanes: \(id) done \(duration) after publish; A's broadcast had sent \(hugeSent)")
            }
            #expect(hugeSent < large.count)
            let bBroadcast = try #require(try await harness.job("b-broadcast", app: WorkerHarness.otherApp)?.counters)
            #expect(bBroadcast.sent == other.count)

            #expect(await harness.waitUntilFinished("slow") == .done)
            #expect(try await harness.job("slow")?.counters.sent == 20)
            #expect(try await harness.store.cancelJob(JobKey(app: WorkerHarness.app, id: "huge")) == .running)
            for worker in workers { try await worker.stop() }
        }
    }
}
