import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldWorker
import Testing

/// RabbitMQ closes a channel that holds a delivery unacknowledged past `consumer_timeout` (30 min by default), while
/// the channel is busy. A throttled job must therefore wait for its turn in the broker, not in a worker holding its
/// batch. Here the dev broker's timeout is cut to 5 s (for the channels opened from then on, with 1 s ticks) and
/// restored after: a job throttled to 2 per second runs for 12 s beside another app's broadcast.
///
/// Runs alone with the broker (make test's second phase, beside the loopback-only APNs client suites): the setting
/// is the broker's, not this test's.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(3))) struct ConsumerTimeoutTests {
    static func setBroker(consumerTimeout: Int, tick: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            TestServices.repositoryRoot + "/deploy/dev/services.sh", "rabbitmqctl", "eval",
            "application:set_env(rabbit, consumer_timeout, \(consumerTimeout)), "
                + "application:set_env(rabbit, channel_tick_interval, \(tick)).",
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "rabbitmqctl eval failed")
    }

    /// Runs a job throttled to 2 per second (24 devices: 12 s) beside a broadcast of the other app, with
    /// `throttleWindow`; returns the worker's log lines that say a channel or its connection was lost and, if the
    /// worker ended by itself, why.
    static func runThrottledJob(throttleWindow: Duration, untilTheWorkerEnds: Bool) async throws
        -> (lost: [String], ended: String?)
    {
        try setBroker(consumerTimeout: 5_000, tick: 1_000)
        defer { try? setBroker(consumerTimeout: 1_800_000, tick: 60_000) }
        var result: (lost: [String], ended: String?) = ([], nil)
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 24)
            try await harness.importDevices(count: 3_000, prefix: "cafe", app: WorkerHarness.otherApp)
            let worker = try harness.startWorker {
                $0.batchSize = 100
                $0.throttleWindow = throttleWindow
            }
            var slow = Job(
                id: "slow", app: WorkerHarness.app, target: .all,
                notification: JobNotification(aps: ["alert": "hi"], custom: ["job": "slow"]))
            slow.throttlePerSecond = 2
            try await harness.publish(slow)
            // Other batches on the deliverer's channel meanwhile: a channel that is idle is not checked.
            try await harness.publish(WorkerHarness.broadcast(id: "busy", app: WorkerHarness.otherApp))
            if untilTheWorkerEnds {
                do {
                    try await worker.task.value
                    result.ended = "ended without an error"
                } catch {
                    result.ended = String(describing: error)
                }
            } else {
                #expect(await harness.waitUntilFinished("slow") == .done)
                #expect(await harness.waitUntilFinished("busy", app: WorkerHarness.otherApp) == .done)
                let received = harness.received(job: "slow")
                #expect(received.count == devices.count && Set(received) == Set(devices.map(\.token.hex)))
                try await worker.stop()
            }
            result.lost = harness.logs.all.filter { $0.contains("re-established") || $0.contains("channel") }
        }
        return result
    }

    @Test func aThrottledJobRunningLongerThanTheConsumerTimeoutLeavesNoChannelClosed() async throws {
        // The default window: a batch holds about 2 s of the job's rate, and is held no longer.
        let run = try await Self.runThrottledJob(throttleWindow: .seconds(2), untilTheWorkerEnds: false)
        #expect(run.lost == [])
    }

    /// The control: with a window of 12 s, one batch holds the whole job and is held while it is paced, past the
    /// timeout; the broker closes the deliverer's channel, and the worker ends with that error (a process manager
    /// would restart it, and the batch would be delivered again).
    @Test func aBatchHeldPastTheConsumerTimeoutHasItsChannelClosed() async throws {
        let run = try await Self.runThrottledJob(throttleWindow: .seconds(12), untilTheWorkerEnds: true)
        let ended = try #require(run.ended)
        #expect(ended.contains("delivery acknowledgement"), "\(ended)")
    }
}
