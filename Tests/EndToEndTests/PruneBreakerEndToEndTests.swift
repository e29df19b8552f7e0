import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Issue 16's "pruning you can trust and undo" end to end: a misconfigured app (every token BadDeviceToken) stops
/// the job and prunes nothing; a healthy job's few bad tokens are pruned as before, and `herald devices restore`
/// puts them back.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct PruneBreakerEndToEndTests {
    @Test func aBroadcastAnsweredBadDeviceTokenForEveryDeviceStopsTheJobAndPrunesNothing() async throws {
        try await WorkerHarness.with {
            $0.badTokenPrefixes = ["bad0"]
        } _: { harness in
            try await harness.importDevices(count: 500, prefix: "bad0")
            let worker = try harness.startWorker { $0.batchSize = 100 }
            try await harness.publish(WorkerHarness.broadcast(id: "wrong-environment"))
            #expect(await harness.waitUntilFinished("wrong-environment") == .failed)

            let status = try #require(try await harness.job("wrong-environment"))
            let error = try #require(status.error)
            #expect(error.contains("misconfigured"))
            #expect(error.contains("wrong APNs environment or topic"))
            #expect(error.contains("BadDeviceToken"))
            #expect(status.counters.pruned == 0)
            #expect(
                harness.events.events.contains(.pruneBreakerTripped(app: WorkerHarness.app, id: "wrong-environment")))
            // Nothing lost: every device is still registered, and no dead token was recorded.
            #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 500)
            #expect(try await harness.store.deadTokens(app: WorkerHarness.app).isEmpty)
            // No token in the job's error.
            #expect(!error.contains("bad0"))
            try await worker.stop()
        }
    }

    @Test func aFewBadTokensInAHealthyBroadcastArePrunedAndRestoreBringsThemBack() async throws {
        try await WorkerHarness.with {
            $0.badTokenPrefixes = ["bad0"]
        } _: { harness in
            let details: (Int, DeviceToken) -> DeviceRecord = { index, token in
                DeviceRecord(token: token, userID: "user-\(index)", locale: "fr-CA", topics: ["news", "t\(index)"])
            }
            try await harness.importDevices(count: 475, prefix: "beef", make: details)
            let bad = try await harness.importDevices(count: 25, prefix: "bad0", make: details)
            let worker = try harness.startWorker()
            try await harness.publish(WorkerHarness.broadcast(id: "healthy"))
            #expect(await harness.waitUntilFinished("healthy") == .done)

            let status = try #require(try await harness.job("healthy"))
            #expect(status.counters.pruned == 25)
            #expect(status.counters.sent == 475)
            #expect(!harness.events.events.contains(.pruneBreakerTripped(app: WorkerHarness.app, id: "healthy")))
            #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 475)
            try await worker.stop()

            let output = try await Self.herald(
                ["devices", "restore", "--app", WorkerHarness.app, "--job", "healthy"], database: harness.database.url)
            #expect(output.status == 0)
            #expect(output.stdout.contains("25 restored, 0 skipped"))
            #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 500)
            for record in bad {
                let device = try #require(try await harness.store.device(app: WorkerHarness.app, token: record.token))
                #expect(device.userID == record.userID)
                #expect(device.locale == "fr-CA")
                #expect(device.topics == record.topics)
            }

            // Bounded input: a job id with a control character is refused before the database is asked.
            let refused = try await Self.herald(
                ["devices", "restore", "--app", WorkerHarness.app, "--job", "a\u{7}b"], database: harness.database.url)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("control character"))
        }
    }

    /// Runs the `herald` executable built next to the tests, waiting for its exit (by its termination handler).
    static func herald(_ arguments: [String], database: String) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: WorkerHarness.heraldExecutable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = database
        process.environment = environment
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        let exited = EventCollector<Int32>()
        process.terminationHandler = { exited.record($0.terminationStatus) }
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let status = await exited.wait { !$0.isEmpty }.first ?? -1
        return (status, stdout, stderr)
    }
}
