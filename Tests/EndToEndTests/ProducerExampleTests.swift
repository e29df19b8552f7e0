import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// The Python producer example of docs/producer.md, run as it is written (with pika from the virtual environment
/// that `make test` creates in .state/pika): the job it publishes with a confirm is delivered by a worker.
@Suite(
    .needsServices, .timeLimit(.minutes(2)),
    .enabled(if: PikaPython.path != nil, "needs .state/pika (make test creates it) or HERALD_TEST_PYTHON"))
struct ProducerExampleTests {
    /// The first fenced ```python block of `file`.
    static func pythonExample(in file: String) throws -> String {
        let text = try String(contentsOfFile: TestServices.repositoryRoot + "/" + file, encoding: .utf8)
        let start = try #require(text.range(of: "\n```python\n"))
        let end = try #require(text.range(of: "\n```\n", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound]) + "\n"
    }

    @Test func thePythonExampleOfTheProducerGuidePublishesAJobAWorkerDelivers() async throws {
        let python = try #require(PikaPython.path)
        let script = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("publish") + ".py")
        try Self.pythonExample(in: "docs/producer.md").write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        try await WorkerHarness.with { harness in
            let fans = try await harness.importDevices(count: 3) { _, token in
                DeviceRecord(token: token, topics: ["sports"])
            }
            try await harness.importDevices(count: 2, prefix: "cafe")  // not in the topic
            let worker = try harness.startWorker()
            let run = try WatchedProcess(
                executable: python, arguments: [script.path],
                environment: [
                    "HERALD_AMQP_URL": TestServices.amqpURL, "HERALD_JOBS_QUEUE": harness.topology.jobs,
                    "JOB_ID": "py-1",
                ])
            #expect(await run.exit() == 0, "\(run.output)")
            #expect(run.output.contains("published job py-1"))
            #expect(await harness.waitUntilFinished("py-1") == .done)
            try await worker.stop()
            let received = harness.simulator.records.filter { $0.payload.contains("Goal!") }.map(\.token)
            #expect(Set(received) == Set(fans.map(\.token.hex)) && received.count == fans.count)
            #expect(try await harness.job("py-1")?.counters.sent == fans.count)
        }
    }
}

/// A Python with pika: `HERALD_TEST_PYTHON`, or the virtual environment `make test` makes in .state/pika.
enum PikaPython {
    static var path: String? {
        let candidates = [
            ProcessInfo.processInfo.environment["HERALD_TEST_PYTHON"],
            TestServices.repositoryRoot + "/.state/pika/bin/python",
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
