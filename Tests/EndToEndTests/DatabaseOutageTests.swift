import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// PostgreSQL stopped under a busy worker on quorum queues, for longer than the queues' delivery limit would allow
/// if the worker handed messages back: nothing is dropped, nothing parked, every device reached once.
///
/// Stops the shared dev PostgreSQL, so `make test` runs this suite on its own, after the others (with the broker
/// restart suite).
@Suite(.serialized, .timeLimit(.minutes(5))) struct DatabaseOutageTests {
    @Test func aPostgreSQLStopLongerThanTheDeliveryLimitLosesNothingOnQuorumQueues() async throws {
        // A delivery limit of 3: a worker that handed a message back once a second (as before) lost it to the broker
        // within seconds of the stop.
        try await WorkerHarness.with(queueType: .quorum, deliveryLimit: 3) { harness in
            let devices = try await harness.importDevices(count: 3000)
            let worker = try harness.startWorker {
                $0.batchSize = 250
                $0.maximumDeliveries = 2
                // Statements lost with their connections are given up on 3 s after the database is back (15 s in
                // production), so that the test does not wait out the production grace.
                $0.databaseStalls = StallPolicy(checkInterval: .seconds(1), grace: .seconds(3))
            }
            try await harness.publish(WorkerHarness.broadcast(id: "b1"))
            try await harness.publish(WorkerHarness.broadcast(id: "b2"))
            var jobs: Set<String> = ["b1", "b2"]
            _ = await harness.events.wait { events in
                events.contains { if case .batchCompleted = $0 { true } else { false } }
            }

            try DevServices.run("stop-postgres")
            for i in 0..<30 {
                try await harness.publish(SmallJobTests.job("single-\(i)", tokens: [devices[i].token.hex]))
                jobs.insert("single-\(i)")
            }
            // The outage lasts until one operation has waited for the database six times (with its backoff, several
            // seconds: more than three deliveries' worth of the old hand-back-every-second).
            _ = await harness.events.wait { events in
                events.contains { if case .waitingForDatabase(_, let wait) = $0 { wait >= 6 } else { false } }
            }
            try DevServices.run("start-postgres")

            await harness.waitUntilFinished(jobs, in: .done)
            try await worker.stop()

            #expect(harness.parkedReasons.isEmpty)
            for id in ["b1", "b2"] {
                let received = harness.received(job: id)
                #expect(received.count == devices.count, "\(id): every device once")
                #expect(Set(received).count == devices.count)
                let counters = try await harness.job(id)?.counters
                #expect(counters?.targeted == devices.count)
                #expect(counters?.sent == devices.count)
            }
            for i in 0..<30 { #expect(harness.received(job: "single-\(i)") == [devices[i].token.hex]) }
        }
    }
}

/// The dev services script (`deploy/dev/services.sh`), for tests that stop and start a service.
enum DevServices {
    static func run(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServices.repositoryRoot + "/deploy/dev/services.sh")
        process.arguments = [command]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "services.sh \(command) failed"])
        }
    }
}
