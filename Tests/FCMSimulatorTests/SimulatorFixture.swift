import AsyncHTTPClient
import FCMSimulator
import Foundation
import HeraldTestSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An answer as the test client saw it.
struct TestResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: String
    var version: HTTPVersion

    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}

/// A running simulator on a free loopback port and an AsyncHTTPClient that trusts the test CA (HTTP/2 by ALPN).
struct SimulatorFixture: Sendable {
    static let registrationToken = "fcm_token-" + String(repeating: "Ab1:", count: 30)
    static let fid = "cAbCdEfGhIjKlMnOpQrS_-"

    let simulator: FCMSimulator
    let client: HTTPClient
    let clock: MockClock
    let port: Int

    var baseURL: String { "https://127.0.0.1:\(port)" }
    var account: TestServiceAccount { .main }

    /// A valid assertion of the main account, signed now.
    func assertion() -> String {
        account.assertion(audience: simulator.tokenAudience, issuedAt: clock.now)
    }

    /// `POST /token` with a form body.
    func postToken(_ body: String, contentType: String = "application/x-www-form-urlencoded") async throws
        -> TestResponse
    {
        try await request("/token", body: body, headers: [("content-type", contentType)])
    }

    /// `POST /token` with a JWT-bearer grant for `assertion`.
    func postToken(assertion: String) async throws -> TestResponse {
        try await postToken("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
    }

    /// Mints an access token for the main account (or `account`).
    func accessToken(for account: TestServiceAccount = .main) async throws -> String {
        let response = try await postToken(
            assertion: account.assertion(audience: simulator.tokenAudience, issuedAt: clock.now))
        guard response.status == 200, let token = response.json["access_token"] as? String else {
            throw FixtureError(message: "no access token: \(response.status) \(response.body)")
        }
        return token
    }

    /// `POST /v1/projects/<project>/messages:send` with a JSON body.
    func send(_ json: String, accessToken: String?, project: String = TestServiceAccount.main.projectID)
        async throws -> TestResponse
    {
        var headers = [("content-type", "application/json")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        return try await request("/v1/projects/\(project)/messages:send", body: json, headers: headers)
    }

    /// Any request.
    func request(_ path: String, method: HTTPMethod = .POST, body: String?, headers: [(String, String)] = [])
        async throws -> TestResponse
    {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers = HTTPHeaders(headers)
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return TestResponse(
            status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes),
            version: response.version)
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Starts a simulator knowing both test accounts (configured further by `configure`), runs `body` with a client, and
/// tears both down.
func withSimulator(
    clock: MockClock = MockClock(),
    httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
    _ configure: (inout FCMSimulatorConfiguration) -> Void = { _ in },
    _ body: (SimulatorFixture) async throws -> Void
) async throws {
    var configuration = FCMSimulatorConfiguration(
        certificateChainPEM: TestCredentials.serverCertificatePEM,
        privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
        serviceAccounts: Dictionary(
            uniqueKeysWithValues: [TestServiceAccount.main, .otherProject].map { account in
                (
                    account.clientEmail,
                    FCMSimulatorConfiguration.ServiceAccount(
                        publicKeyPEM: account.key.publicKey.pemRepresentation, projectID: account.projectID,
                        projectNumber: account.projectNumber, keyID: account.keyID)
                )
            })
    )
    configuration.now = { clock.now }
    configure(&configuration)
    let simulator = FCMSimulator(
        configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        logger: Logger(label: "FCMSimulatorTests"))
    let port = try await simulator.start()

    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.caCertificatePEM.utf8)))
    var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
    clientConfiguration.httpVersion = httpVersion
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)

    let fixture = SimulatorFixture(simulator: simulator, client: client, clock: clock, port: port)
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
