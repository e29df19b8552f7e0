import APNSCore
import APNSSimulator
import APNSTransport
import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldWorker
import Logging
import NIOPosix
import Testing

/// `APNSClients` from an apps file with certificate auth: the `.p12` and the passphrase from `passphrase_env`.
@Suite struct APNSClientsTests {
    /// Writes the test PKCS#12 bundle and the CA into a fresh directory.
    static func writeCredentials() throws -> String {
        let directory = NSTemporaryDirectory() + "herald-apns-clients-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(TestCredentials.clientCertificateP12).write(to: URL(fileURLWithPath: directory + "/push.p12"))
        try TestCredentials.caCertificatePEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        return directory
    }

    static func apps(port: Int, passphraseEnv: String) -> AppsFile {
        AppsFile(apps: [
            AppConfiguration(
                id: "cert-app",
                topic: "com.example.app",
                environment: .sandbox,
                endpoint: "https://127.0.0.1:\(port)",
                caFile: "ca.pem",
                auth: .certificate(p12File: "push.p12", passphraseEnv: passphraseEnv)
            )
        ])
    }

    @Test func certificateAppSendsWithTheClientCertificateFromTheP12File() async throws {
        let directory = try Self.writeCredentials()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let variable = "HERALD_P12_PASSPHRASE"
        let environment = [variable: TestCredentials.clientCertificatePassphrase]

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = APNSSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
            providerKeys: [String: APNSSimulatorConfiguration.ProviderKey]()
        )
        configuration.clientCertificateTrustRootsPEM = [TestCredentials.clientCACertificatePEM]
        let simulator = APNSSimulator(configuration: configuration, eventLoopGroup: group, logger: Logger(label: "sim"))
        let port = try await simulator.start()

        let clients = try APNSClients(
            apps: Self.apps(port: port, passphraseEnv: variable),
            directory: directory,
            connectionsPerApp: 1,
            requestTimeout: .seconds(10),
            eventLoopGroup: group,
            logger: Logger(label: "clients"),
            environment: environment
        )
        let request = APNSRequest(
            deviceToken: DeviceToken(trustedHex: "a1b2c3d4"),
            topic: "com.example.app",
            pushType: .alert,
            priority: .immediate,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
        let outcome = try await clients.client(for: "cert-app")!.send(request)
        #expect(outcome.status == 200)
        #expect(simulator.records.count == 1)
        await clients.shutdown()
        try await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test func wrongPassphraseFailsAtStartWithoutRevealingIt() throws {
        let directory = try Self.writeCredentials()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let variable = "HERALD_P12_PASSPHRASE"
        let environment = [variable: "not-the-passphrase"]
        let error = #expect(throws: ConfigurationError.self) {
            try APNSClients(
                apps: Self.apps(port: 2197, passphraseEnv: variable),
                directory: directory,
                connectionsPerApp: 1,
                requestTimeout: .seconds(10),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: Logger(label: "clients"),
                environment: environment
            )
        }
        #expect(error?.message.contains("cert-app") == true)
        #expect(error?.message.contains("not-the-passphrase") == false)
    }
}
