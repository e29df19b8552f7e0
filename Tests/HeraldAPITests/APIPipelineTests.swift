import APNSCore
import Foundation
import HeraldAPI
import HeraldCore
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A device registered and a job enqueued through the API, delivered by a real worker to the simulator, and the
/// job's status read back through the API: the row the API writes is the one the worker takes over.
@Suite(.needsServices) struct APIPipelineTests {
    @Test func aJobEnqueuedThroughTheAPIIsDeliveredAndReportedDone() async throws {
        try await APIHarness.run { h in
            let logger = Logger(label: "test.api-pipeline")
            let live = APIHarness.token(1)
            let old = APIHarness.token(2)
            let dead = "dead" + String(APIHarness.token(3).dropFirst(4))
            for body in [
                #"{"token": "\#(old)", "user_id": "u1", "topics": ["sports"]}"#,
                #"{"token": "\#(live)", "old_token": "\#(old)"}"#,
                #"{"token": "\#(dead)", "topics": ["sports"]}"#,
            ] {
                let response = try await h.request(
                    .post, "/v1/apps/\(APIHarness.appA)/devices", key: h.keyA, json: body)
                #expect(response.status == .created)
            }

            // The simulator's 410 timestamps have whole seconds; one a minute ahead is after the registration.
            let deadSince = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            let (simulator, port) = try await TestAPNs.startSimulator {
                $0.deadTokenPrefixes = ["dead"]
                $0.deadTimestamp = deadSince
            }
            let (apps, directory) = try TestAPNs.appsFile(apps: [APIHarness.appA], port: port)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let events = EventCollector<JobEvent>()
            var configuration = WorkerConfiguration(
                amqp: h.configuration.amqp, database: h.configuration.database, apps: apps, appsDirectory: directory
            )
            configuration.topology = h.configuration.topology
            configuration.onJobHandled = { events.record($0) }
            let worker = try buildWorker(configuration: configuration, gracefulShutdownSignals: [], logger: logger)
            let running = Task { try await worker.run() }

            let accepted = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/notifications", key: h.keyA,
                json:
                    #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "Kick-off"}, "custom": {"via": "api"}}}"#,
                headers: [.init("Idempotency-Key")!: "api-e2e"]
            )
            #expect(accepted.status == .accepted)
            _ = await events.wait { $0.contains(.finished(app: APIHarness.appA, id: "api-e2e", state: .done)) }

            // The replaced device kept its topic and got the notification under its new token; the dead one was pruned.
            #expect(simulator.records.map(\.token) == [live])
            let status = try await h.request(.get, "/v1/jobs/api-e2e", key: h.keyA)
            #expect(status.object["state"] as? String == "done")
            let counters = status.object["counters"] as? [String: Int]
            #expect(counters?["sent"] == 1)
            #expect(counters?["pruned"] == 1)
            let report = try await h.request(
                .get, "/v1/apps/\(APIHarness.appA)/reports/dead-tokens?since=1h", key: h.keyA)
            #expect(report.object["total"] as? Int == 1)
            #expect((report.object["rows"] as? [[String: Any]])?.first?["token"] as? String == dead)
            #expect((report.object["rows"] as? [[String: Any]])?.first?["job_id"] as? String == "api-e2e")

            // Retrying the request after it finished sends nothing again.
            let retry = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/notifications", key: h.keyA,
                json:
                    #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "Kick-off"}, "custom": {"via": "api"}}}"#,
                headers: [.init("Idempotency-Key")!: "api-e2e"]
            )
            #expect(retry.object["duplicate"] as? Bool == true)
            #expect(retry.object["state"] as? String == "done")
            #expect(simulator.records.count == 1)

            await worker.triggerGracefulShutdown()
            try await running.value
            try await simulator.stop()
        }
    }

    @Test func theLiveServerEnforcesTheBodyLimitOverASocket() async throws {
        let logger = Logger(label: "test.api-live")
        try await TemporaryDatabase.withMigratedStore { store, database in
            var configuration = APIConfiguration(amqp: try .init(url: TestServices.amqpURL), database: database)
            configuration.topology = .init(prefix: TestServices.uniqueName("live"))
            configuration.maximumBodySize = 2048
            configuration.port = 0
            let key = APIKey.generate()
            _ = try await store.createAPIKey(
                app: APIHarness.appA, hash: APIKey.hash(key), prefix: APIKey.prefix(key), label: nil)
            let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
            let api = API(configuration: configuration, store: store, producer: producer)
            let application = Application(
                router: api.makeRouter(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger
            )
            try await application.test(.live) { client in
                var headers = HTTPFields()
                headers[.authorization] = "Bearer \(key)"
                let big = try await client.execute(
                    uri: "/v1/apps/\(APIHarness.appA)/devices", method: .post, headers: headers,
                    body: .init(
                        string:
                            #"{"token": "\#(APIHarness.token(1))", "user_id": "\#(String(repeating: "u", count: 4000))"}"#
                    )
                )
                #expect(big.status == .contentTooLarge)
                let ok = try await client.execute(
                    uri: "/v1/apps/\(APIHarness.appA)/devices", method: .post, headers: headers,
                    body: .init(string: #"{"token": "\#(APIHarness.token(1))"}"#)
                )
                #expect(ok.status == .created)
            }
            #expect(try await store.deviceCount(app: APIHarness.appA) == 1)
            await producer.close()
        }
    }
}
