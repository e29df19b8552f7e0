import AsyncHTTPClient
import Crypto
import Foundation
import HeraldTestSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import WebPushSimulator

/// An answer as the test client saw it.
struct TestResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: String
    var version: HTTPVersion

    /// `reason` of the JSON body.
    var reason: String? {
        ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any])?["reason"] as? String
    }
}

/// A running simulator on a free loopback port, an AsyncHTTPClient that trusts the test CA (HTTP/2 by ALPN) and a
/// test sender with its own VAPID key.
struct SimulatorFixture: Sendable {
    let simulator: WebPushSimulator
    let client: HTTPClient
    let clock: MockClock
    let port: Int
    let sender: TestPushSender

    /// The push service's origin, as a VAPID `aud`.
    var origin: String { "https://127.0.0.1:\(port)" }

    /// A valid token for this service, signed now.
    func token() throws -> String {
        try sender.token(audience: origin, now: clock.now)
    }

    /// The headers of a valid request; `replacing` overrides (a nil value removes the header).
    func headers(token: String? = nil, replacing overrides: [String: String?] = [:]) throws -> [(String, String)] {
        var headers: [String: String] = [
            "authorization": sender.authorization(token: try token ?? self.token()), "ttl": "60",
            "content-encoding": "aes128gcm", "content-type": "application/octet-stream",
        ]
        for (name, value) in overrides { headers[name] = value }
        return headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Encrypts `text` for `subscription` and posts it with valid headers (and `overrides`).
    func push(
        _ text: String, to subscription: WebPushSimulator.Subscription, token: String? = nil,
        replacing overrides: [String: String?] = [:]
    ) async throws -> TestResponse {
        let body = try TestPushSender.encrypt(Array(text.utf8), p256dh: subscription.p256dh, auth: subscription.auth)
        return try await post(body, to: subscription.endpoint, headers: try headers(token: token, replacing: overrides))
    }

    /// `POST` of raw bytes to an endpoint URL.
    func post(_ body: [UInt8], to endpoint: String, headers: [(String, String)], method: HTTPMethod = .POST)
        async throws -> TestResponse
    {
        var request = HTTPClientRequest(url: endpoint)
        request.method = method
        request.headers = HTTPHeaders(headers)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return TestResponse(
            status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes),
            version: response.version)
    }
}

/// Starts a simulator (configured further by `configure`) on the test CA's certificate, runs `body` with a client,
/// and tears both down.
func withSimulator(
    clock: MockClock = MockClock(),
    httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
    _ configure: (inout WebPushSimulatorConfiguration) -> Void = { _ in },
    _ body: (SimulatorFixture) async throws -> Void
) async throws {
    var configuration = WebPushSimulatorConfiguration(
        certificateChainPEM: TestCredentials.serverCertificatePEM,
        privateKeyPEM: TestCredentials.serverPrivateKeyPEM)
    configuration.now = { clock.now }
    configure(&configuration)
    let simulator = WebPushSimulator(
        configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        logger: Logger(label: "WebPushSimulatorTests"))
    let port = try await simulator.start()

    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.caCertificatePEM.utf8)))
    var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
    clientConfiguration.httpVersion = httpVersion
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)

    let fixture = SimulatorFixture(
        simulator: simulator, client: client, clock: clock, port: port,
        sender: TestPushSender(vapidKey: P256.Signing.PrivateKey()))
    let result: Result<Void, any Error>
    do {
        try await body(fixture)
        result = .success(())
    } catch {
        result = .failure(error)
    }
    try? await client.shutdown()
    try await simulator.stop()
    try result.get()
}
