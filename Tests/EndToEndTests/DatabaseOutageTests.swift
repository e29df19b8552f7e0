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
/// Stops the checkout's dev PostgreSQL (`DevServices`), so `make test` runs this suite after the others, beside
/// suites that do not use PostgreSQL (deploy/dev/test-pairs.sh).
@Suite(.needsServices, .serialized, .timeLimit(.minutes(6))) struct DatabaseOutageTests {
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

            try await Self.expectEveryJobDoneOnceAndNothingParked(
                jobs, broadcasts: ["b1", "b2"], devices, harness, worker)
            for i in 0..<30 { #expect(harness.received(job: "single-\(i)") == [devices[i].token.hex]) }
        }
    }

    /// PostgreSQL stopped until the worker's pool gives up on it: PostgresNIO's pool trips its circuit breaker a
    /// minute after its first failed connect, and from then on refuses every statement at once until its own next
    /// connect, which comes up to a minute after the server is back (its backoff). The outage probe connects on its
    /// own and answers as soon as the server does, so a worker that counted the pool's refusals as failures against
    /// a healthy database gave up after a few seconds: it parked the jobs it was registering (`failed_repeatedly`)
    /// and the batches it had sent (`sent, but the outcome could not be written`), leaving their jobs `running` for
    /// ever (issue 32: 120 s under two broadcasts and a stream of single jobs). The stop lasts 120 s, as in the issue,
    /// and at least until the pool has given up (its breaker is what made the old worker count failures): far longer
    /// than the queues' delivery limit would allow a worker that handed messages back.
    @Test func aHundredAndTwentySecondStopLosesNothingOnQuorumQueues() async throws {
        // Each notification answered after 300 ms: the broadcasts' batches are still out when the database stops,
        // so their outcomes are written only once it is back.
        try await WorkerHarness.with(queueType: .quorum, deliveryLimit: 3) {
            $0.responseDelay = .milliseconds(300)
        } _: { harness in
            let devices = try await harness.importDevices(count: 2000)
            let worker = try harness.startWorker {
                $0.batchSize = 100
                $0.maximumDeliveries = 2
                $0.databaseStalls = StallPolicy(checkInterval: .seconds(1), grace: .seconds(3))
            }
            var jobs: Set<String> = ["b1", "b2"]
            try await harness.publish(WorkerHarness.broadcast(id: "b1"))
            try await harness.publish(WorkerHarness.broadcast(id: "b2"))
            for i in 0..<100 {
                try await harness.publish(SmallJobTests.job("before-\(i)", tokens: [devices[i].token.hex]))
                jobs.insert("before-\(i)")
            }
            _ = await harness.events.wait { events in
                events.contains { if case .batchCompleted = $0 { true } else { false } }
            }

            try DevServices.run("stop-postgres")
            let stopped = ContinuousClock.now
            for i in 0..<200 {
                try await harness.publish(SmallJobTests.job("during-\(i)", tokens: [devices[100 + i].token.hex]))
                jobs.insert("during-\(i)")
            }
            // Until the worker's own pool refuses with its circuit breaker (the scheduler's passes say so), checked
            // on each event: held operations tell each of their waits.
            _ = await harness.events.wait { _ in
                harness.logs.entries("scheduler pass failed").contains {
                    $0.metadata["error"]?.contains("circuit breaker is open") == true
                }
            }
            // The outage's length is the input of this test, not a wait for its outcome.
            try await Task.sleep(until: stopped + .seconds(120), clock: .continuous)
            try DevServices.run("start-postgres")

            try await Self.expectEveryJobDoneOnceAndNothingParked(
                jobs, broadcasts: ["b1", "b2"], devices, harness, worker)
            for i in 0..<100 { #expect(harness.received(job: "before-\(i)") == [devices[i].token.hex]) }
            for i in 0..<200 { #expect(harness.received(job: "during-\(i)") == [devices[100 + i].token.hex]) }
        }
    }

    /// Waits until every job of `jobs` finished, or any message was parked (which must not happen: then the test
    /// fails here, not on its time limit); stops the worker; then expects nothing parked, every job done, and each
    /// broadcast's devices sent to once and counted.
    static func expectEveryJobDoneOnceAndNothingParked(
        _ jobs: Set<String>, broadcasts: [String], _ devices: [DeviceRecord], _ harness: WorkerHarness,
        _ worker: RunningWorker
    ) async throws {
        let events = await harness.events.wait { events in
            var ended = Set<String>()
            for event in events {
                switch event {
                case .finished(WorkerHarness.app, let id, _), .parked(let id?, _): ended.insert(id)
                default: break
                }
            }
            return ended.isSuperset(of: jobs) || events.contains { if case .parked = $0 { true } else { false } }
        }
        try await worker.stop()

        #expect(harness.parkedReasons.isEmpty)
        let done = Set(
            events.compactMap { event -> String? in
                if case .finished(WorkerHarness.app, let id, .done) = event { id } else { nil }
            })
        #expect(done == jobs)
        for id in broadcasts {
            let received = harness.received(job: id)
            #expect(received.count == devices.count, "\(id): every device once")
            #expect(Set(received).count == devices.count)
            let counters = try await harness.job(id)?.counters
            #expect(counters?.targeted == devices.count)
            #expect(counters?.sent == devices.count)
        }
    }
}

/// The dev services script (`deploy/dev/services.sh`) of this checkout, for tests that stop and start a service:
/// it acts on the services this checkout's `up` started, on the ports it recorded (`.state/ports.env`; see
/// docs/development.md), so a checkout with services of its own never stops another's.
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
