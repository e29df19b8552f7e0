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
}
