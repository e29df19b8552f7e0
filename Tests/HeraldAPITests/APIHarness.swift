import Foundation
import HeraldAPI
import HeraldCore
import HeraldMessaging
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RabbitMQ

/// One API over a fresh migrated database and uniquely named queues, with a key for each of two apps.
struct APIHarness: Sendable {
    static let appA = "com.example.news"
    static let appB = "com.example.weather"

    let client: any TestClientProtocol
    let store: Store
    let configuration: APIConfiguration
    let keyA: String
    let keyB: String

    /// App A's identity secret (app B has none, so its register-only keys bind nothing).
    static let identitySecret = Array("app-a-identity-secret-for-tests".utf8)

    /// An identity token of app A for `subject` and `device` (hex), valid for `lifetime` seconds from now (negative:
    /// expired), signed with `secret`.
    static func identityToken(
        _ subject: IdentityToken.Subject, device: String, lifetime: Int64 = 600, secret: [UInt8] = identitySecret,
        app: String = appA
    ) -> String {
        IdentityToken.mint(
            secret: secret, app: app, subject: subject, device: device,
            expiry: Int64(Date().timeIntervalSince1970) + lifetime)
    }

    static func token(_ n: Int, prefix: String = "ab") -> String {
        let hex = String(n, radix: 16)
        return prefix + String(repeating: "0", count: 62 - hex.count) + hex
    }

    /// Runs `body` against the router (no sockets), then deletes the test's queues.
    static func run(
        maximumBodySize: Int = 64 * 1024, apps: AppsFile? = nil, live: Bool = false,
        configure: (inout APIConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (APIHarness) async throws -> Void
    ) async throws {
        let logger = Logger(label: "test.api")
        try await TemporaryDatabase.withMigratedStore { store, database in
            var configuration = APIConfiguration(
                amqp: try AMQPConfiguration(url: TestServices.amqpURL), database: database)
            configuration.topology = Topology(prefix: TestServices.uniqueName("api"))
            configuration.maximumBodySize = maximumBodySize
            configuration.apps = apps
            configuration.identities[appA] = AppIdentity(secret: identitySecret)
            configure(&configuration)
            let keyA = APIKey.generate()
            let keyB = APIKey.generate()
            _ = try await store.createAPIKey(
                app: appA, hash: APIKey.hash(keyA), prefix: APIKey.prefix(keyA), label: "a")
            _ = try await store.createAPIKey(
                app: appB, hash: APIKey.hash(keyB), prefix: APIKey.prefix(keyB), label: nil)
            let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
            // Connected before the first request, as a running API soon is: readiness then reads its state.
            try await producer.connect()
            let api = API(configuration: configuration, store: store, producer: producer)
            let application = Application(router: api.makeRouter(), logger: logger)
            let settings = configuration
            let outcome: Result<Void, any Error>
            do {
                try await application.test(live ? .live : .router) { client in
                    try await body(
                        APIHarness(
                            client: client, store: store, configuration: settings, keyA: keyA, keyB: keyB
                        )
                    )
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            await producer.close()
            try await deleteQueues(of: configuration.topology, amqp: configuration.amqp)
            try outcome.get()
        }
    }

    static func deleteQueues(of topology: Topology, amqp: AMQPConfiguration) async throws {
        let connection = try await AMQPConnection.connect(amqp, logger: Logger(label: "test.cleanup"))
        try await topology.delete(on: connection)
        await connection.close()
    }

    /// A request with an optional bearer key and JSON body.
    func request(
        _ method: HTTPRequest.Method,
        _ uri: String,
        key: String?,
        json: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }
        )
    }
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }

    /// The body as a JSON object.
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The `error.code` of a JSON error body.
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
}
