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
@Suite(.timeLimit(.minutes(5))) struct CrashTests {
    /// The `herald` executable built next to the test bundle.
    static var heraldExecutable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald").path
    }

    @Test func aWorkerKilledMidBroadcastLosesNothingAndDuplicatesAtMostItsBatchesInFlight() async throws {
        let batchSize = 200
        let batchPrefetch = 2
        try await WorkerHarness.with(simulator: { $0.responseDelay = .milliseconds(2) }) { harness in
            let devices = try await harness.importDevices(count: 4_000)
            let appsFile = harness.appsDirectory + "/apps.json"
            try JSONEncoder().encode(harness.apps).write(to: URL(fileURLWithPath: appsFile))

            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.heraldExecutable)
            process.arguments = [
                "worker", "--apps-file", appsFile, "--queue-prefix", harness.topology.prefix,
                "--batch-size", String(batchSize), "--batch-prefetch", String(batchPrefetch), "--metrics-port", "0",
                "--log-level", "warning",
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_AMQP_URL"] = TestServices.amqpURL
            environment["HERALD_DATABASE_URL"] = harness.database.url
            process.environment = environment
            try process.run()

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
