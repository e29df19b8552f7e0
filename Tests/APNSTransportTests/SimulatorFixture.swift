import APNSCore
import APNSSimulator
import Foundation
import HeraldTestSupport
import Logging
import NIOCore
import NIOPosix
import PushTransport
import Synchronization

/// A simulator on port 0 and a client pointed at it, trusting the test CA; both torn down after `body`.
struct SimulatorFixture {
    let simulator: APNSSimulator
    let client: APNSClient
    let cache: ProviderTokenCache
    let clock: MockClock
    let logs: LogRecorder

    static func with<T>(
        simulator configureSimulator: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        client configureClient: (inout APNSClientConfiguration) -> Void = { _ in },
        _ body: (SimulatorFixture) async throws -> T
    ) async throws -> T {
        // Own event loops per test, so that a heavy test running in parallel does not hold up this one's loops.
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer {
            serverGroup.shutdownGracefully { _ in }
            clientGroup.shutdownGracefully { _ in }
        }
        let clock = MockClock()
        let signer = try ProviderTokenSigner(
            teamID: TestCredentials.teamID,
            keyID: TestCredentials.keyID,
            pemKey: TestCredentials.providerKeyPEM
        )
        var simulatorConfiguration = APNSSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
            providerKeys: [TestCredentials.keyID: (teamID: TestCredentials.teamID, publicKeyPEM: signer.publicKeyPEM)]
        )
        simulatorConfiguration.now = { clock.now }
        simulatorConfiguration.nowMilliseconds = { clock.now * 1000 }
        configureSimulator(&simulatorConfiguration)
        var simulatorLogger = Logger(label: "apns-simulator")
        simulatorLogger.logLevel = .warning
        let simulator = APNSSimulator(
            configuration: simulatorConfiguration,
            eventLoopGroup: serverGroup,
            logger: simulatorLogger
        )
        let port = try await simulator.start()

        let cache = ProviderTokenCache(signer: signer, now: { clock.now })
        var clientConfiguration = APNSClientConfiguration(
            endpoint: .init(host: "127.0.0.1", port: port),
            authentication: .token(cache),
            additionalTrustRootsPEM: [TestCredentials.caCertificatePEM],
            connections: 1
        )
        configureClient(&clientConfiguration)
        let logs = LogRecorder()
        var logger = Logger(label: "apns-client") { _ in logs.handler() }
        logger.logLevel = .trace
        let client = APNSClient(configuration: clientConfiguration, eventLoopGroup: clientGroup, logger: logger)
        let fixture = SimulatorFixture(simulator: simulator, client: client, cache: cache, clock: clock, logs: logs)
        do {
            let result = try await body(fixture)
            await client.shutdown()
            try await simulator.stop()
            return result
        } catch {
            await client.shutdown()
            try? await simulator.stop()
            throw error
        }
    }
}

/// A well-formed alert request to `token`.
func makeRequest(token: String = "a1b2c3d4", apnsID: APNSID? = nil) -> APNSRequest {
    APNSRequest(
        deviceToken: DeviceToken(trustedHex: token),
        topic: "com.example.app",
        pushType: .alert,
        priority: .immediate,
        expiration: 0,
        apnsID: apnsID,
        payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
    )
}
