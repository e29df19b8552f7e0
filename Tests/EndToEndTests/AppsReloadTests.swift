import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// `kill -HUP` makes a running `herald worker` reread its apps file (docs/operations.md, "A new app or a rotated key:
/// SIGHUP"): an app added to the file gets its jobs delivered, without a restart and without losing the work of the
/// apps it had.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct AppsReloadTests {
    @Test func aSIGHUPAddsAnAppToARunningWorker() async throws {
        try await WorkerHarness.with { harness in
            let first = try await harness.importDevices(count: 1)
            let second = try await harness.importDevices(count: 1, prefix: "b0b", app: WorkerHarness.otherApp)
            // The worker starts with the first app only.
            let appsFile = harness.appsDirectory + "/reloaded-apps.json"
            var onlyFirst = harness.apps
            onlyFirst.apps.removeAll { $0.id != WorkerHarness.app }
            try JSONEncoder().encode(onlyFirst).write(to: URL(fileURLWithPath: appsFile))
            let worker = try WorkerProcess(harness: harness, appsFile: appsFile)
            defer { worker.stopIfRunning() }

            try await harness.publish(SmallJobTests.job("first", tokens: [first[0].token.hex]))
            await harness.simulator.waitForRecords(count: 1)

            // Both apps in the file, then the signal; the worker says when the new file is in use.
            try JSONEncoder().encode(harness.apps).write(to: URL(fileURLWithPath: appsFile))
            kill(worker.process.processIdentifier, SIGHUP)
            await worker.waitForOutput("apps file reloaded")

            var job = SmallJobTests.job("second", tokens: [second[0].token.hex])
            job.app = WorkerHarness.otherApp
            try await harness.publish(job)
            await harness.simulator.waitForRecords(count: 2)
            #expect(harness.received(job: "second", app: WorkerHarness.otherApp) == [second[0].token.hex])
            #expect(harness.received(job: "first") == [first[0].token.hex])

            // A file that does not parse is refused and the apps in use are kept.
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: appsFile))
            kill(worker.process.processIdentifier, SIGHUP)
            await worker.waitForOutput("apps file not reloaded; the apps in use are kept")
            var third = SmallJobTests.job("third", tokens: [second[0].token.hex])
            third.app = WorkerHarness.otherApp
            try await harness.publish(third)
            await harness.simulator.waitForRecords(count: 3)
            #expect(harness.received(job: "third", app: WorkerHarness.otherApp) == [second[0].token.hex])

            // SIGTERM still drains and exits 0.
            #expect(await worker.terminate() == 0)
        }
    }

    /// SIGHUP's default action ends a process: `herald api` logs it and goes on serving; SIGTERM still stops it
    /// cleanly (a process the signal had killed would not exit 0).
    @Test func aSIGHUPNeitherEndsNorStopsTheAPI() async throws {
        try await TemporaryDatabase.withMigratedStore { _, database in
            let api = try WorkerProcess(
                arguments: [
                    "api", "--port", "0", "--queue-prefix", TestServices.uniqueName("sighup"), "--log-level", "debug",
                ],
                databaseURL: database.url)
            defer { api.stopIfRunning() }
            await api.waitForOutput("SIGHUP trapped")
            kill(api.process.processIdentifier, SIGHUP)
            await api.waitForOutput("SIGHUP received and ignored")
            #expect(api.process.isRunning)
            #expect(await api.terminate() == 0)
        }
    }
}

/// A `herald worker` process on the harness's queues and database, its log (at notice) read as it comes.
final class WorkerProcess: @unchecked Sendable {
    let process = Process()
    private let output: AsyncStream<String>
    private var seen = ""

    convenience init(harness: WorkerHarness, appsFile: String) throws {
        try self.init(
            arguments: [
                "worker", "--apps-file", appsFile, "--queue-prefix", harness.topology.prefix, "--metrics-port", "0",
                "--log-level", "notice",
            ],
            databaseURL: harness.database.url)
    }

    /// Any `herald` command (`herald api` too) with the test services' broker and `databaseURL`.
    init(arguments: [String], databaseURL: String) throws {
        process.executableURL = URL(fileURLWithPath: WorkerHarness.heraldExecutable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_AMQP_URL"] = TestServices.amqpURL
        environment["HERALD_DATABASE_URL"] = databaseURL
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        output = stream
        try process.run()
        PipeReader.start(pipe.fileHandleForReading) { data in
            if data.isEmpty {
                continuation.finish()
            } else {
                continuation.yield(String(decoding: data, as: UTF8.self))
            }
        }
    }

    /// Waits until the worker's log has printed `text` (since the last wait), or has ended.
    func waitForOutput(_ text: String) async {
        if let range = seen.range(of: text) {
            seen.removeSubrange(seen.startIndex..<range.upperBound)
            return
        }
        for await chunk in output {
            seen += chunk
            if let range = seen.range(of: text) {
                seen.removeSubrange(seen.startIndex..<range.upperBound)
                return
            }
        }
    }

    /// SIGTERM, then the exit status once the worker has drained.
    func terminate() async -> Int32 {
        // The worker runs until it is told to stop: one that exited on its own fails the test by its time limit.
        await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            process.terminate()
        }
    }

    func stopIfRunning() {
        if process.isRunning { process.terminate() }
    }
}
