import Foundation
import HeraldAPI
import HeraldCore
import HeraldMessaging
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import RabbitMQ
import Testing

/// The API names what is wrong instead of answering 500: a database it cannot use is a 503 with `Retry-After`, and
/// an app its apps file does not list a 404 `unknown_app`.
@Suite(.needsServices, .timeLimit(.minutes(1))) struct UnavailableAndUnknownTests {
    @Test func anAppTheAppsFileDoesNotListIsRefusedWhenTheAPIHasOne() async throws {
        let (apps, directory) = try TestAPNs.appsFile(apps: [APIHarness.appA], port: 2197)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await APIHarness.run(apps: apps) { h in
            let listed = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/devices", key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(1))"}"#)
            #expect(listed.status == .created)
            // Key B is for an app the file does not list: every route of that app says so.
            let unknown = try await h.request(
                .post, "/v1/apps/\(APIHarness.appB)/devices", key: h.keyB,
                json: #"{"token": "\#(APIHarness.token(2))"}"#)
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "unknown_app")
            #expect(unknown.text.contains("app \(APIHarness.appB) is not in the API's apps file"))
            let notified = try await h.request(
                .post, "/v1/apps/\(APIHarness.appB)/notifications", key: h.keyB,
                json: #"{"target": {"all": true}, "notification": {"aps": {"alert": "x"}}}"#)
            #expect(notified.errorCode == "unknown_app")
            #expect(
                try await h.store.device(app: APIHarness.appB, token: .init(trustedHex: APIHarness.token(2))) == nil)
            // Authentication still comes first.
            let anonymous = try await h.request(.post, "/v1/apps/\(APIHarness.appB)/devices", key: nil, json: "{}")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func aDatabaseThatIsDownIsA503WithRetryAfterAndReadinessSaysWhichDependencyIsDown() async throws {
        let logger = Logger(label: "test.api.down")
        var database = try DatabaseConfiguration(url: TestServices.databaseURL)
        database.port = 1  // nothing listens: every connection is refused, as with PostgreSQL stopped
        var configuration = APIConfiguration(amqp: try AMQPConfiguration(url: TestServices.amqpURL), database: database)
        configuration.topology = Topology(prefix: TestServices.uniqueName("api-down"))
        let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger)
        let store = Store(
            client: client, logger: logger, stalls: API.databaseStalls,
            probeConnection: try database.connectionConfiguration())
        let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
        let api = API(configuration: configuration, store: store, producer: producer)
        let pool = Task { await client.run() }
        try await producer.connect()
        let outcome: Result<Void, any Error>
        do {
            try await Application(router: api.makeRouter(), logger: logger).test(.router) { client in
                let answer = try await client.execute(
                    uri: "/v1/jobs/j1", method: .get, headers: [.authorization: "Bearer hk_anything"])
                #expect(answer.status == .serviceUnavailable)
                #expect(answer.headers[.retryAfter] == "5")
                #expect(answer.errorCode == "database_unavailable")

                let ready = try await client.execute(uri: "/health/ready", method: .get)
                #expect(ready.status == .serviceUnavailable)
                let checks = ready.object["checks"] as? [String: Bool]
                #expect(checks == ["postgres": false, "amqp": true], "\(ready.text)")
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await producer.close()
        pool.cancel()
        try await APIHarness.deleteQueues(of: configuration.topology, amqp: configuration.amqp)
        try outcome.get()
    }
}
