import APNSCore
import APNSSimulator
import Foundation
import HeraldTestSupport
import Logging
import NIOPosix
import Synchronization

enum Fixtures {
    static let signer = try! ProviderTokenSigner(
        teamID: TestCredentials.teamID,
        keyID: TestCredentials.keyID,
        pemKey: TestCredentials.providerKeyPEM
    )
    static let secondSigner = try! ProviderTokenSigner(
        teamID: TestCredentials.teamID,
        keyID: TestCredentials.secondKeyID,
        pemKey: TestCredentials.secondProviderKeyPEM
    )
    static let token = String(repeating: "ab", count: 32)
    static let deadToken = "dead" + String(repeating: "0", count: 60)
    static let topic = "com.example.app"

    static func configuration(clock: MockClock) -> APNSSimulatorConfiguration {
        var configuration = APNSSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
            providerKeys: [
                TestCredentials.keyID: (teamID: TestCredentials.teamID, publicKeyPEM: signer.publicKeyPEM)
            ]
        )
        configuration.topics = [topic]
        configuration.deadTokenPrefixes = ["dead"]
        configuration.now = { clock.now }
        configuration.nowMilliseconds = { clock.now * 1000 }
        return configuration
    }

    /// A valid alert request; `edit` changes headers by name (nil removes) before it is built.
    static func request(
        token: String = token,
        jwt: String,
        pushType: String = "alert",
        topic: String = topic,
        extra: [(String, String)] = [],
        body: [UInt8] = Array(#"{"aps":{"alert":"hello"}}"#.utf8),
        method: String = "POST",
        path: String? = nil
    ) -> TestRequest {
        var headers: [(String, String)] = [
            (":method", method), (":scheme", "https"), (":path", path ?? "/3/device/\(token)"),
            (":authority", "127.0.0.1"),
            ("authorization", "bearer \(jwt)"), ("apns-topic", topic), ("apns-push-type", pushType),
        ]
        headers += extra
        return TestRequest(headers: headers, body: body)
    }
}

/// A running simulator and a raw client connected to it.
struct Harness {
    let simulator: APNSSimulator
    let client: RawHTTP2Client
    let clock: MockClock
    let port: Int

    /// One provider token for the whole test, signed when the harness started: APNs (and the simulator) answer
    /// TooManyProviderTokenUpdates to a connection that changes tokens within 20 minutes, and ES256 signatures are
    /// randomised, so signing per request would make a new token every time.
    let jwt: String

    /// A token signed now, different from ``jwt``.
    func freshJWT() -> String { try! Fixtures.signer.makeToken(issuedAt: clock.now) }

    func connectAnotherClient() async throws -> RawHTTP2Client {
        try await RawHTTP2Client.connect(port: port)
    }
}

/// Starts a simulator (configured by `configure`), connects a raw client, runs `body` and tears both down.
func withHarness(
    clock: MockClock = MockClock(),
    _ configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
    _ body: (Harness) async throws -> Void
) async throws {
    var configuration = Fixtures.configuration(clock: clock)
    configure(&configuration)
    let simulator = APNSSimulator(
        configuration: configuration,
        eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        logger: Logger(label: "APNSSimulatorTests")
    )
    let port = try await simulator.start()
    let client: RawHTTP2Client
    do {
        client = try await RawHTTP2Client.connect(port: port)
    } catch {
        try await simulator.stop()
        throw error
    }
    do {
        try await body(
            Harness(
                simulator: simulator,
                client: client,
                clock: clock,
                port: port,
                jwt: try Fixtures.signer.makeToken(issuedAt: clock.now)
            )
        )
    } catch {
        await client.close()
        try await simulator.stop()
        throw error
    }
    await client.close()
    try await simulator.stop()
}

extension RawHTTP2Client.Response {
    /// Status, reason and timestamp as the lead's decoder reads them.
    var outcome: APNSOutcome {
        APNSOutcome(
            status: status,
            apnsID: headers["apns-id"],
            apnsUniqueID: headers["apns-unique-id"],
            body: Array(body.utf8)
        )
    }

    var reason: String? { outcome.reason?.rawValue }
}
