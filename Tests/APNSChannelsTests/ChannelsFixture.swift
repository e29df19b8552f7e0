import APNSChannels
import APNSCore
import APNSSimulator
import Foundation
import HeraldTestSupport
import Logging
import NIOPosix
import Synchronization

/// A simulator on loopback TLS and channel clients pointed at it (management and broadcasts on its one port),
/// trusting the test CA and signing with the test key.
struct ChannelsFixture {
    static let bundle = "com.example.scores"

    let simulator: APNSSimulator
    let port: Int

    /// Runs `body` with a started simulator (configured by `configure`), stopping it afterwards.
    static func run(
        _ configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        _ body: (ChannelsFixture) async throws -> Void
    ) async throws {
        let (simulator, port) = try await TestAPNs.startSimulator(configure)
        do {
            try await body(ChannelsFixture(simulator: simulator, port: port))
        } catch {
            try? await simulator.stop()
            throw error
        }
        try await simulator.stop()
    }

    func configuration(bundle: String = Self.bundle) -> APNSChannelsConfiguration {
        APNSChannelsConfiguration(
            bundleID: bundle, managementHost: "127.0.0.1", managementPort: port, broadcastHost: "127.0.0.1",
            broadcastPort: port, additionalTrustRootsPEM: [TestCredentials.caCertificatePEM])
    }

    static func tokens(
        keyPEM: String = TestCredentials.providerKeyPEM, keyID: String = TestCredentials.keyID,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) -> ProviderTokenCache {
        // The fixture keys are valid PEM; failing here is a broken fixture.
        let signer = try! ProviderTokenSigner(teamID: TestCredentials.teamID, keyID: keyID, pemKey: keyPEM)
        return ProviderTokenCache(signer: signer, now: now)
    }

    /// Runs `body` with a client, shut down afterwards.
    func withClient<T>(
        _ configuration: APNSChannelsConfiguration? = nil, tokens: ProviderTokenCache = Self.tokens(),
        _ body: (APNSChannelsClient) async throws -> T
    ) async throws -> T {
        let client = APNSChannelsClient(
            configuration: configuration ?? self.configuration(), providerTokens: tokens,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "test.channels"))
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// A Live Activity update as a broadcast carries it.
    static let update = Array(
        #"{"aps":{"content-state":{"home":2,"away":1},"event":"update","timestamp":1900000000}}"#.utf8)
}
