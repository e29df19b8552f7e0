import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A worker process killed with SIGKILL in the middle of a broadcast: nothing is lost, and the duplicates are bounded
/// by the batches it had in flight.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct CrashTests {
    @Test func aWorkerKilledMidBroadcastLosesNothingAndDuplicatesAtMostItsBatchesInFlight() async throws {
        let batchSize = 200
        let batchPrefetch = 2
        try await WorkerHarness.with {
            $0.responseDelay = .milliseconds(2)
        } _: { harness in
            let devices = try await harness.importDevices(count: 4_000)
            let process = try harness.spawnWorkerProcess(arguments: [
                "--batch-size", String(batchSize), "--batch-prefetch", String(batchPrefetch),
            ])
            defer { if process.isRunning { process.terminate() } }  // if the test fails before the kill

            try await harness.publish(WorkerHarness.broadcast(id: "killed"))
            await harness.simulator.waitForRecords(count: 1_000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            let survivor = try harness.startWorker { $0.batchSize = batchSize }
            #expect(await harness.waitUntilFinished("killed") == .done)
            let received = harness.received(job: "killed")
            #expect(Set(received) == Set(devices.map(\.token.hex)))  // nothing lost
            let duplicates = received.count - devices.count
            #expect(duplicates <= (batchPrefetch + 1) * batchSize)  // only batches in flight at the kill
            try await survivor.stop()
        }
    }

    /// Issue 35: with the default flags (batches of 5,000, four in hand, 500 devices committed at a time as a batch
    /// goes), a worker killed mid-broadcast re-sends at most one slice of each batch it held, not whole batches:
    /// at most 2,000 duplicates of 20,000 devices; nothing lost; the job's books balance.
    @Test func aWorkerKilledMidBroadcastWithTheDefaultFlagsResendsAtMostASliceOfEachBatch() async throws {
        try await WorkerHarness.with {
            $0.responseDelay = .milliseconds(2)
        } _: { harness in
            let devices = try await harness.importDevices(count: 20_000)
            let process = try harness.spawnWorkerProcess()
            defer { if process.isRunning { process.terminate() } }  // if the test fails before the kill

            try await harness.publish(WorkerHarness.broadcast(id: "killed"))
            await harness.simulator.waitForRecords(count: 6_000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            let survivor = try harness.startWorker()
            #expect(await harness.waitUntilFinished("killed") == .done)
            let received = harness.received(job: "killed")
            #expect(Set(received) == Set(devices.map(\.token.hex)))  // nothing lost
            let duplicates = received.count - devices.count
            let configuration = try harness.configuration()
            harness.logger.info("duplicates after the kill", metadata: ["duplicates": "\(duplicates)"])
            #expect(duplicates <= Int(configuration.batchPrefetch) * configuration.commitSlice)  // 4 × 500
            let status = try #require(try await harness.job("killed"))
            #expect(status.counters.targeted == 20_000 && status.counters.sent == 20_000)
            try await survivor.stop()
        }
    }
}
