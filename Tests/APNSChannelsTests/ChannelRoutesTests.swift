import APNSSimulator
import Foundation
import HeraldAPI
import HeraldCore
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RabbitMQ
import Testing

/// The API's channel routes against the simulator and a migrated database (no broker: they publish nothing).
@Suite(.needsServices) struct ChannelRoutesTests {
    static let app = "com.example.scores"

    /// Runs `body` with a test client of the router, an admin key and a read key; with `appsFile`, the API's apps
    /// file points the app's channel API at a simulator.
    static func run(
        appsFile: Bool = true,
        configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        _ body:
            @Sendable (any TestClientProtocol, _ admin: String, _ read: String, APNSSimulator, Store) async throws
            -> Void
    ) async throws {
        try await ChannelsFixture.run(configure) { fixture in
            try await TemporaryDatabase.withMigratedStore { store, database in
                var configuration = APIConfiguration(
                    amqp: try AMQPConfiguration(url: TestServices.amqpURL), database: database)
                // The apps file's temporary directory, removed when the test is done.
                var made: String? = nil
                defer { if let made { try? FileManager.default.removeItem(atPath: made) } }
                if appsFile {
                    var (apps, directory) = try TestAPNs.appsFile(apps: [Self.app], port: fixture.port)
                    made = directory
                    apps.apps[0].liveActivities = LiveActivitySettings(
                        channelsEndpoint: "https://127.0.0.1:\(fixture.port)")
                    configuration.apps = apps
                    configuration.appsDirectory = directory
                }
                let admin = APIKey.generate()
                let read = APIKey.generate()
                _ = try await store.createAPIKey(app: Self.app, hash: APIKey.hash(admin), prefix: "a", label: nil)
                _ = try await store.createAPIKey(
                    app: Self.app, hash: APIKey.hash(read), prefix: "r", label: nil, scopes: [.read])
                let logger = Logger(label: "test.api")
                let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
                let api = API(configuration: configuration, store: store, producer: producer)
                let simulator = fixture.simulator
                try await Application(router: api.makeRouter(), logger: logger).test(.router) { client in
                    try await body(client, admin, read, simulator, store)
                }
                await producer.close()
            }
        }
    }

    static func call(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, key: String,
        json: String? = nil
    ) async throws -> (status: Int, object: [String: Any]) {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        let object = (try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)))
        return (Int(response.status.code), object as? [String: Any] ?? [:])
    }

    @Test func aChannelIsCreatedListedShownAndDeleted() async throws {
        try await Self.run { client, admin, read, simulator, store in
            let base = "/v1/apps/\(Self.app)/channels"
            let created = try await Self.call(
                client, .post, base, key: admin,
                json: #"{"storage_policy": 0, "label": "cup final", "ends_at": "2099-05-01T21:00:00Z"}"#)
            #expect(created.status == 201)
            let id = try #require(created.object["id"] as? String)
            #expect(created.object["storage_policy"] as? Int == 0)
            #expect(created.object["environment"] as? String == "sandbox")
            #expect(created.object["ends_at"] as? String == "2099-05-01T21:00:00.000Z")
            #expect(simulator.channels(bundleID: Self.app).map(\.id) == [id])

            let listed = try await Self.call(client, .get, base, key: read)
            #expect((listed.object["channels"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [id])
            let encoded = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let shown = try await Self.call(client, .get, base + "/" + encoded, key: read)
            #expect(shown.status == 200)
            #expect(shown.object["label"] as? String == "cup final")

            #expect(try await Self.call(client, .delete, base + "/" + encoded, key: read).status == 403)
            #expect(try await Self.call(client, .delete, base + "/" + encoded, key: admin).status == 204)
            #expect(simulator.channels(bundleID: Self.app).isEmpty)
            #expect(try await store.channels(app: Self.app).isEmpty)
            #expect(try await Self.call(client, .get, base + "/" + encoded, key: read).status == 404)
            #expect(try await Self.call(client, .delete, base + "/" + encoded, key: admin).status == 404)
        }
    }

    @Test func badBodiesAreRefusedBeforeApple() async throws {
        try await Self.run { client, admin, read, simulator, _ in
            let base = "/v1/apps/\(Self.app)/channels"
            for body in [
                #"{"storage_policy": 2}"#, #"{"ends_at": "tomorrow"}"#, #"{"ends_at": "2001-01-01T00:00:00Z"}"#,
                #"{"label": "\#(String(repeating: "x", count: 201))"}"#,
                // A six-digit year used to crash the API in Date encoding, after Apple had created the channel.
                #"{"ends_at": "300000-01-01T00:00:00Z"}"#, #"{"label": ""}"#, #"{"lable": "x"}"#,
            ] {
                let answer = try await Self.call(client, .post, base, key: admin, json: body)
                #expect(answer.status == 400, "\(body)")
            }
            let typo = try await Self.call(
                client, .post, base, key: admin, json: #"{"endsAt": "2099-01-01T00:00:00Z"}"#)
            let typoMessage = (typo.object["error"] as? [String: Any])?["message"] as? String
            #expect(typoMessage == "unknown field endsAt in the channel; did you mean ends_at?")
            // Malformed ids are answered 400 here, never forwarded to Apple (which answered 502).
            for id in ["abc", "a%3D%3D%3D", "ab-_", "a%00b"] {
                let deleted = try await Self.call(client, .delete, base + "/" + id, key: admin)
                #expect(deleted.status == 400, "\(id)")
                #expect((deleted.object["error"] as? [String: Any])?["code"] as? String == "invalid_channel_id")
            }
            let forbidden = try await Self.call(client, .post, base, key: read, json: "{}")
            #expect(forbidden.status == 403)
            #expect(simulator.counts.isEmpty)
        }
    }

    @Test func appleRefusalsAreBadGatewayWithTheReason() async throws {
        try await Self.run {
            $0.broadcastDisabledBundles = [Self.app]
        } _: { client, admin, _, _, store in
            let refused = try await Self.call(client, .post, "/v1/apps/\(Self.app)/channels", key: admin, json: "{}")
            #expect(refused.status == 502)
            let error = refused.object["error"] as? [String: Any]
            #expect(error?["code"] as? String == "apns_refused")
            #expect((error?["message"] as? String)?.contains("FeatureNotEnabled") == true)
            #expect(try await store.channels(app: Self.app).isEmpty)
        }
    }

    @Test func appleQuotaIsAConflict() async throws {
        try await Self.run {
            $0.maximumChannelsPerApp = 0
        } _: { client, admin, _, _, _ in
            let refused = try await Self.call(client, .post, "/v1/apps/\(Self.app)/channels", key: admin, json: "{}")
            #expect(refused.status == 409)
            #expect((refused.object["error"] as? [String: Any])?["code"] as? String == "channel_quota")
        }
    }

    @Test func withoutAnAppsFileTheRoutesAnswer503() async throws {
        try await Self.run(appsFile: false) { client, admin, read, _, _ in
            let base = "/v1/apps/\(Self.app)/channels"
            let created = try await Self.call(client, .post, base, key: admin, json: "{}")
            #expect(created.status == 503)
            #expect((created.object["error"] as? [String: Any])?["code"] as? String == "channels_unavailable")
            #expect(try await Self.call(client, .get, base, key: read).status == 503)
        }
    }
}
