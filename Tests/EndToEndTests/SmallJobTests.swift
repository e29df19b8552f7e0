import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Small jobs (a few explicit tokens each) are started, sent and completed in groups: the same outcomes as one by one
/// — each device notified once per job, dead tokens pruned, duplicates sent once — and a worker killed in the middle
/// of a group loses nothing.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct SmallJobTests {
    static func job(_ id: String, tokens: [String]) -> Job {
        Job(
            id: id, app: WorkerHarness.app, target: .tokens(tokens),
            notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string(id)]))
    }

    @Test func aBurstOfSmallJobsReachesEveryDeviceOncePrunesTheDeadAndSendsDuplicatesOnce() async throws {
        try await WorkerHarness.with {
            $0.deadTokenPrefixes = ["dead"]
        } _: { harness in
            let live = try await harness.importDevices(count: 300)
            let dead = try await harness.importDevices(count: 20, prefix: "dead")
            // Published before any worker runs, so that the worker takes them in as one burst.
            var ids: [String] = []
            for (i, device) in live.enumerated() {
                ids.append("small-\(i)")
                try await harness.publish(Self.job("small-\(i)", tokens: [device.token.hex]))
            }
            for (i, device) in dead.enumerated() {
                ids.append("dead-\(i)")
                try await harness.publish(Self.job("dead-\(i)", tokens: [device.token.hex]))
            }
            ids.append("mixed")
            try await harness.publish(Self.job("mixed", tokens: [live[0].token.hex, "not-a-token"]))
            try await harness.publish(Self.job("small-1", tokens: [live[1].token.hex]))  // the same id again

            let worker = try harness.startWorker()
            let expected = Set(ids)
            await harness.waitUntilFinished(expected, in: .done)
            try await worker.stop()

            for (i, device) in live.enumerated() {
                #expect(harness.received(job: "small-\(i)") == [device.token.hex])
            }
            #expect(try await harness.job("small-1")?.counters == JobCounters(targeted: 1, sent: 1))
            #expect(try await harness.job("mixed")?.counters == JobCounters(targeted: 2, sent: 1, failed: 1))
            #expect(try await harness.job("dead-3")?.counters == JobCounters(targeted: 1, pruned: 1))
            let pruned = try await harness.store.deadTokens(app: WorkerHarness.app)
            #expect(Set(pruned.map(\.token)) == Set(dead.map(\.token)))
            #expect(Set(pruned.compactMap(\.jobID)) == Set((0..<20).map { "dead-\($0)" }))
        }
    }

    @Test func smallJobsAPNsRejectsAsAWholeAreFailedWithTheReasonAndParkedOnceEach() async throws {
        try await WorkerHarness.with {
            $0.topics = ["com.someone.else"]
        } _: { harness in
            let devices = try await harness.importDevices(count: 30)
            for (i, device) in devices.enumerated() {
                try await harness.publish(Self.job("rejected-\(i)", tokens: [device.token.hex]))
            }
            let worker = try harness.startWorker()
            let expected = Set((0..<devices.count).map { "rejected-\($0)" })
            await harness.waitUntilFinished(expected, in: .failed)
            try await worker.stop()
            for id in expected {
                let status = try #require(try await harness.job(id))
                #expect(status.state == .failed)
                #expect(status.error?.contains("Topic") == true)
                #expect(status.counters == JobCounters(targeted: 1, failed: 1))
            }
            #expect(try await harness.publisher.queueMessageCount(harness.topology.parked) == devices.count)
        }
    }

    @Test func aWorkerKilledInTheMiddleOfAGroupLosesNoJob() async throws {
        try await WorkerHarness.with {
            $0.responseDelay = .milliseconds(3)
        } _: { harness in
            let devices = try await harness.importDevices(count: 600)
            // Fewer jobs in hand than published, so that the bound on duplicates below means something.
            let prefetch = 256
            let process = try harness.spawnWorkerProcess(arguments: ["--prefetch", "\(prefetch)"])
            defer { if process.isRunning { process.terminate() } }  // if the test fails before the kill

            let ids = devices.indices.map { "killed-\($0)" }
            for (id, device) in zip(ids, devices) {
                try await harness.publish(Self.job(id, tokens: [device.token.hex]))
            }
            await harness.simulator.waitForRecords(count: 100)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            // What the killed worker had not finished — never started, or started with its batch still pending —
            // the survivor finishes, from the redelivered messages alone.
            var unfinished = Set<String>()
            for id in ids where try await harness.job(id)?.state != .done { unfinished.insert(id) }
            let survivor = try harness.startWorker()
            let awaited = unfinished
            await harness.waitUntilFinished(awaited, in: .done)
            try await survivor.stop()

            var duplicates = 0
            for (id, device) in zip(ids, devices) {
                let received = harness.received(job: id)
                #expect(received.first == device.token.hex)  // nothing lost
                duplicates += max(0, received.count - 1)
                #expect(try await harness.job(id)?.state == .done)
            }
            #expect(duplicates <= prefetch)  // at most the jobs the killed worker had in hand
        }
    }
}
