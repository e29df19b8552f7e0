import HeraldCore
import HeraldMessaging
import HeraldTestSupport
import HeraldWorker
import RabbitMQ
import Testing

/// `herald parked replay` end to end: a job parked for a cause that is then fixed is delivered once replayed.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct ParkedReplayTests {
    @Test func aJobParkedForAnUnknownAppIsDeliveredOnceTheAppIsAddedAndItIsReplayed() async throws {
        try await WorkerHarness.with { harness in
            let app = WorkerHarness.otherApp
            try await harness.importDevices(count: 1, app: app)
            let withoutApp = AppsFile(apps: harness.apps.apps.filter { $0.id != app })
            let before = try harness.startWorker { $0.apps = withoutApp }
            try await harness.publish(WorkerHarness.broadcast(id: "replay-1", app: app))
            let events = await harness.events.wait { events in
                events.contains { if case .parked("replay-1"?, _) = $0 { true } else { false } }
            }
            #expect(
                events.contains {
                    if case .parked(_, let reason) = $0 { reason.hasPrefix("unknown_app") } else { false }
                })
            try await before.stop()
            #expect(harness.received(job: "replay-1", app: app).isEmpty)

            let parked = ParkedMessages(connection: harness.publisher, topology: harness.topology)
            let listed = try await parked.list(ParkedMessageFilter(reason: "unknown_app"), limit: 10)
            #expect(listed.taken.map(\.jobID) == ["replay-1"])
            #expect(listed.taken.first?.app == app)
            #expect(listed.taken.first?.originQueue == harness.topology.jobs)
            #expect(listed.taken.first?.parkedAt != nil)
            // Listing removed nothing.
            try await waitForParked(count: 1, harness)

            // The app is in the apps file now (the harness's full one): a worker restarted with it.
            let after = try harness.startWorker()
            let replayed = try await replayParked(
                ParkedMessageFilter(reason: "unknown_app"), limit: 10, connection: harness.publisher,
                topology: harness.topology, store: harness.store)
            #expect(replayed.taken.map(\.jobID) == ["replay-1"])
            #expect(replayed.refused.isEmpty)
            #expect(await harness.waitUntilFinished("replay-1", app: app) == .done)
            #expect(harness.received(job: "replay-1", app: app).count == 1)
            // The parked copy was acknowledged: the queue no longer holds it.
            try await waitForParked(count: 0, harness)
            try await after.stop()
        }
    }

    /// Waits until the parking queue holds `count` ready messages (a closed reader's messages come back, and its
    /// acks land, a moment after it returns); the time limit is a guard.
    private func waitForParked(count: UInt32, _ harness: WorkerHarness) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while try await harness.publisher.queueMessageCount(harness.topology.parked) != count {
            guard clock.now < deadline else {
                Issue.record("the parking queue never held \(count) message(s)")
                return
            }
            await Task.yield()
        }
    }
}
