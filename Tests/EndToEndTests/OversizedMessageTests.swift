import Foundation
import HeraldCore
import HeraldMessaging
import HeraldTestSupport
import RabbitMQ
import Testing

/// A message over the worker's size limit is refused from its content header (issue 32): a 120 MiB job was parked
/// correctly but took the worker's peak RSS to 172 MB, since its body was buffered whole before the check.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct OversizedMessageTests {
    @Test func aMessageOverTheLimitIsParkedWithoutTheWorkerEverHoldingItsBody() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 1)
            // A worker process of its own, so that its peak RSS is its alone.
            let process = try harness.spawnWorkerProcess()
            defer { if process.isRunning { process.terminate() } }
            try await harness.publish(SmallJobTests.job("warm", tokens: [devices[0].token.hex]))
            await harness.simulator.waitForRecords(count: 1)
            let before = try Self.peakResidentKilobytes(of: process.processIdentifier)

            // RabbitMQ takes messages up to 128 MiB by default.
            let size = 120 << 20
            try await harness.publishRaw(
                [UInt8](repeating: 0x20, count: size), properties: AMQPProperties(messageID: "huge"))
            let parked = try await harness.publisher.consume(queue: harness.topology.parked, prefetch: 1)
            let copy = try #require(try await parked.first { _ in true })
            let after = try Self.peakResidentKilobytes(of: process.processIdentifier)
            try await parked.ack(copy)
            try await parked.cancel()
            process.terminate()
            process.waitUntilExit()

            let message = ParkedMessage(copy)
            #expect(message.messageID == "huge")
            #expect(message.reason?.hasPrefix("too_large: the message is \(size) bytes, over the 1048576-byte") == true)
            #expect(message.originQueue == harness.topology.jobs)
            // (Its count, not the body: a failure must not print 120 MiB.)
            #expect(copy.body.count == 0)
            // Holding the body would have taken at least its 120 MiB; the worker grew by far less than half of it.
            #expect(after - before < 40 << 10, "peak RSS grew from \(before) kB to \(after) kB")
        }
    }

    /// The process's peak resident set size (VmHWM), in kB.
    static func peakResidentKilobytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return try #require(fields.count > 1 ? Int(fields[1]) : nil)
    }
}
