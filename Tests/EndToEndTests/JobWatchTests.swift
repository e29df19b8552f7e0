import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

/// `herald jobs watch`, as the built binary, follows a real broadcast (RabbitMQ, PostgreSQL, a worker and the APNs
/// simulator) from before it reaches a worker to its end.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct JobWatchTests {
    @Test func jobsWatchFollowsARunningBroadcastToItsEnd() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 600)
            let worker = try harness.startWorker { $0.batchSize = 100 }
            let watch = try WatchedProcess(
                arguments: [
                    "jobs", "watch", "w1", "--app", WorkerHarness.app, "--interval", "0.2", "--wait", "150",
                    "--database-url", harness.database.url,
                ])
            // Started before the job exists: it waits for it (or it ended, and the test fails with what it said).
            let waiting = await watch.lines.wait {
                $0.contains { $0.hasPrefix("waiting for job w1") } || $0.contains(WatchedProcess.endOfOutput)
            }
            try #require(waiting.contains { $0.hasPrefix("waiting for job w1") }, "\(waiting)")
            var job = WorkerHarness.broadcast(id: "w1")
            job.throttlePerSecond = 200  // three seconds at least: a job the watch sees running
            try await harness.publish(job)
            let status = await watch.exit()
            try await worker.stop()

            let lines = watch.output
            #expect(status == 0, "\(lines)")
            let running = lines.filter { $0.hasPrefix("running") }
            #expect(!running.isEmpty, "\(lines)")
            #expect(running.allSatisfy { $0.contains("sent ") && $0.contains("pruned ") && $0.contains("failed ") })
            #expect(running.contains { $0.contains("/s") && $0.contains("ETA ") }, "\(running)")
            let settled = running.compactMap(Self.settled)
            #expect(settled == settled.sorted(), "progress never goes back: \(running)")
            let last = try #require(lines.last)
            #expect(last.hasPrefix("job w1 of app \(WorkerHarness.app) done in "), "\(last)")
            #expect(
                last.hasSuffix(
                    ": \(devices.count) targeted, \(devices.count) sent, 0 pruned, 0 failed, 0 expired"), "\(last)")
            #expect(harness.received(job: "w1").count == devices.count)

            let shown = try WatchedProcess(
                arguments: ["jobs", "show", "w1", "--app", WorkerHarness.app, "--database-url", harness.database.url])
            #expect(await shown.exit() == 0)
            #expect(
                shown.output.contains("progress: 100.0% settled (600 of 600 targeted; planning done)"),
                "\(shown.output)")
        }
    }

    /// The settled count of a `running` line: `(N of M settled)` or `N settled)` while planning.
    static func settled(_ line: String) -> Int? {
        guard let range = line.range(of: #"\d+(?= of \d+ settled\)| settled\))"#, options: .regularExpression)
        else { return nil }
        return Int(line[range])
    }
}

/// A process (`herald` unless told otherwise) whose standard output is read line by line as it comes.
final class WatchedProcess: Sendable {
    /// The lines so far, then `endOfOutput` once the output has ended (the process exited).
    let lines = EventCollector<String>()
    /// The last line `lines` records.
    static let endOfOutput = "\u{4}"
    /// The exit status, and nil for the end of the output: both come before `exit()` returns.
    private let ends = EventCollector<Int32?>()
    private let pending = PendingText()

    init(
        executable: String = WorkerHarness.heraldExecutable, arguments: [String],
        environment extra: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_LOG_LEVEL"] = "warning"
        environment.merge(extra) { _, given in given }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        let (lines, pending, ends) = (self.lines, self.pending, self.ends)
        process.terminationHandler = { ends.record($0.terminationStatus) }
        try process.run()
        PipeReader.start(pipe.fileHandleForReading) { data in
            let complete = pending.text.withLock { buffer -> [String] in
                buffer += String(decoding: data, as: UTF8.self)
                var parts = buffer.components(separatedBy: "\n")
                buffer = data.isEmpty ? "" : parts.removeLast()
                return parts.filter { !data.isEmpty || !$0.isEmpty }
            }
            for line in complete { lines.record(line) }
            if data.isEmpty {
                lines.record(Self.endOfOutput)
                ends.record(nil)
            }
        }
    }

    /// The lines of its output so far.
    var output: [String] { lines.events.filter { $0 != Self.endOfOutput } }

    /// Waits for the process to exit and its output to end; its exit status.
    func exit() async -> Int32 {
        let ends = await self.ends.wait { $0.count == 2 }
        return ends.compactMap { $0 }.first ?? -1
    }
}

/// The output after the last complete line.
private final class PendingText: Sendable {
    let text = Mutex("")
}
