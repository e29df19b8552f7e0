import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import MetricsTestKit
import PostgresNIO
import Testing

/// Every way a job ends is written by `herald_end_jobs` (schemas/031), and `herald_jobs_finished_total` counts each
/// end once: a worker and the API's cancel (a store of its own, as `herald api` has) end jobs in every way, and the
/// counter equals, state by state, the jobs the database holds as ended.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct JobEndsTests {
    @Test func everyWayAJobEndsIsCountedOnce() async throws {
        try await WorkerHarness.with {
            // A job-level refusal (the topic) for the other app's device: its job is failed and parked after its
            // claim.
            $0.injectedFailures = [InjectedFailure(status: 400, reason: "BadTopic", tokenPrefix: "bad7")]
        } _: { harness in
            let metrics = TestMetrics()
            let app = WorkerHarness.app
            let devices = try await harness.importDevices(count: 3)
            let refused = try await harness.importDevices(count: 1, prefix: "bad7", app: WorkerHarness.otherApp)
            let updateToken = WorkerHarness.token(1, prefix: "0d")
            _ = try await harness.store.registerUpdateToken(
                app: app, activityID: "delivery", device: devices[0].token, token: updateToken, registeredBy: nil)
            let channel = harness.simulator.addChannel(bundleID: app, messageStoragePolicy: 1).id
            _ = try await harness.store.recordChannel(
                ActivityChannel(app: app, id: channel, environment: "sandbox", storagePolicy: 1))
            let endpoint = "https://127.0.0.1:\(harness.port)"
            let worker = try harness.startWorker {
                $0.storeMetrics = StoreMetrics(factory: metrics)
                for index in $0.apps.apps.indices {
                    $0.apps.apps[index].liveActivities = LiveActivitySettings(
                        channelsEndpoint: endpoint, broadcastEndpoint: endpoint)
                }
            }
            let alert = JobNotification(aps: ["alert": "hello"])
            let past = Int64(Date().timeIntervalSince1970) - 60

            // Done: a small job (its group writes it done) and a broadcast (its last batch ends it).
            try await harness.publish(
                Job(id: "small", app: app, target: .tokens([devices[1].token.hex]), notification: alert))
            try await harness.publish(WorkerHarness.broadcast(id: "everyone"))
            // Done with every device expired: nothing sent.
            try await harness.publish(
                Job(
                    id: "stale", app: app, target: .tokens([devices[2].token.hex]),
                    notification: JobNotification(expiration: past, aps: ["alert": "late"])))
            // Failed: refused by APNs as a whole after its claim (and parked), and parked at intake (no such app).
            try await harness.publish(
                Job(
                    id: "refused", app: WorkerHarness.otherApp, target: .tokens([refused[0].token.hex]),
                    notification: alert))
            try await harness.publish(Job(id: "nobody", app: "com.example.nobody", target: .all, notification: alert))
            // Done: a broadcast to a Live Activity channel.
            try await harness.publish(
                LiveActivityTests.job("channel", target: .channel(channel), event: "update", step: 1))
            // Done, then cancelled: a newer Live Activity event, then an older one (superseded).
            try await harness.publish(
                LiveActivityTests.job(
                    "newer", target: .activity("delivery"), event: "update", step: 2,
                    extra: ["timestamp": .integer(2_000)]))
            #expect(await harness.waitUntilFinished("newer") == .done)
            try await harness.publish(
                LiveActivityTests.job(
                    "older", target: .activity("delivery"), event: "update", step: 1,
                    extra: ["timestamp": .integer(1_000)]))
            // Cancelled through the API's store while it waits for its time.
            var later = Job(id: "later", app: app, target: .all, notification: alert)
            later.sendAt = RFC3339.format(milliseconds: WorkerHarness.nowMilliseconds() + 3_600_000)
            try await harness.publish(later)

            _ = await harness.events.wait { events in
                var finished = Set<String>()
                var parked = 0
                var scheduled = false
                for event in events {
                    switch event {
                    case .finished(_, let id, _): finished.insert(id)
                    case .parked: parked += 1
                    case .scheduled(_, "later"): scheduled = true
                    default: break
                    }
                }
                return finished.isSuperset(of: ["small", "everyone", "stale", "refused", "channel", "newer", "older"])
                    && parked >= 1 && scheduled
            }
            let api = Store(
                client: harness.store.client, logger: harness.logger, metrics: StoreMetrics(factory: metrics))
            #expect(try await api.cancelJob(JobKey(app: app, id: "later")) == .scheduled)
            // A second cancel ends nothing and counts nothing.
            #expect(try await api.cancelJob(JobKey(app: app, id: "later")) == nil)
            try await worker.stop()

            let states: [(String, String, JobState)] = [
                (app, "small", .done), (app, "everyone", .done), (app, "stale", .done), (app, "channel", .done),
                (app, "newer", .done), (app, "older", .cancelled), (app, "later", .cancelled),
                (WorkerHarness.otherApp, "refused", .failed), ("com.example.nobody", "nobody", .failed),
            ]
            for (jobApp, id, state) in states {
                #expect(try await harness.store.job(app: jobApp, id: id)?.state == state, "\(id)")
            }
            var ended: [String: Int64] = [:]
            let rows = try await harness.store.client.query(
                "SELECT state, count(*) FROM jobs WHERE herald_job_is_final(state) GROUP BY state",
                logger: harness.logger)
            for try await (state, count) in rows.decode((String, Int64).self) { ended[state] = count }
            #expect(ended.values.reduce(0, +) == Int64(states.count))
            for state in JobState.allCases where state.isFinal {
                let counted = metrics.counterTotal(
                    label: "herald_jobs_finished_total", dimensions: [("state", state.rawValue)])
                #expect(counted == ended[state.rawValue, default: 0], "\(state)")
            }
        }
    }
}
