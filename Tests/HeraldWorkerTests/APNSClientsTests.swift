import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOPosix
import PushTransport
import Testing

@testable import HeraldWorker

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

    /// Apple's environment-scoped keys: an app serving both environments names a key per environment, and each
    /// environment's client signs with its own (the production endpoint here knows only the production key, the
    /// sandbox one only the sandbox key, as Apple answers BadEnvironmentKeyInToken to a key of the other).
    @Test func eachEnvironmentSignsWithTheKeyTheAppNamesForIt() async throws {
        let directory = NSTemporaryDirectory() + "herald-env-keys-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TestCredentials.providerKeyPEM.write(toFile: directory + "/prod.p8", atomically: true, encoding: .utf8)
        try TestCredentials.secondProviderKeyPEM.write(
            toFile: directory + "/sandbox.p8", atomically: true, encoding: .utf8)
        try TestCredentials.caCertificatePEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        let sandboxKey = try ProviderTokenSigner(
            teamID: TestCredentials.teamID, keyID: TestCredentials.secondKeyID,
            pemKey: TestCredentials.secondProviderKeyPEM)
        let (production, productionPort) = try await TestAPNs.startSimulator()
        let (sandbox, sandboxPort) = try await TestAPNs.startSimulator {
            $0.providerKeys = [
                TestCredentials.secondKeyID: .init(
                    teamID: TestCredentials.teamID, publicKeyPEM: sandboxKey.publicKeyPEM)
            ]
        }
        let apps = AppsFile(apps: [
            AppConfiguration(
                id: "both", topic: "com.example.app", environment: .production,
                environments: [.production, .sandbox],
                endpoints: [
                    "production": "https://127.0.0.1:\(productionPort)", "sandbox": "https://127.0.0.1:\(sandboxPort)",
                ],
                caFile: "ca.pem",
                auth: .token(teamID: TestCredentials.teamID, keyID: TestCredentials.keyID, keyFile: "prod.p8"),
                authByEnvironment: [
                    "sandbox": .token(
                        teamID: TestCredentials.teamID, keyID: TestCredentials.secondKeyID, keyFile: "sandbox.p8")
                ])
        ])
        // The apps file as an operator writes it reads back the same.
        #expect(try AppsFile.parse(JSONEncoder().encode(apps)) == apps)
        let clients = try APNSClients(
            apps: apps, directory: directory, connectionsPerApp: 1, requestTimeout: .seconds(10),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "clients"))
        let request = APNSRequest(
            deviceToken: DeviceToken(trustedHex: "a1b2c3d4"), topic: "com.example.app", pushType: .alert,
            priority: .immediate, payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8))
        let lease = try #require(clients.lease("both"))
        #expect(try await lease.clients.client(for: .production)!.send(request).status == 200)
        #expect(try await lease.clients.client(for: .sandbox)!.send(request).status == 200)
        clients.release(lease)
        #expect(production.records.count == 1 && sandbox.records.count == 1)
        await clients.shutdown()
        try await production.stop()
        try await sandbox.stop()
    }

    @Test func anEnvironmentKeyForAnEnvironmentTheAppDoesNotServeIsRefused() throws {
        let file = #"""
            {"apps": [{"id": "a", "topic": "a", "environment": "production",
              "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"},
              "auth_by_environment": {
                "sandbox": {"type": "token", "team_id": "T", "key_id": "S", "key_file": "s.p8"}}}]}
            """#
        let error = #expect(throws: ConfigurationError.self) { try AppsFile.parse(Data(file.utf8)) }
        #expect(error?.message == "app a: auth_by_environment names sandbox, which the app does not serve")
    }
}
