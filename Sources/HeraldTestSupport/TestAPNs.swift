import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import Logging
import NIOPosix

/// The simulator and an apps file that points at it, wired with the test credentials.
public enum TestAPNs {
    /// The public half of `TestCredentials.providerKeyPEM`.
    public static var providerPublicKeyPEM: String {
        // The fixture key is valid PEM; failing here is a broken fixture, not a test outcome.
        (try? ProviderTokenSigner(
            teamID: TestCredentials.teamID, keyID: TestCredentials.keyID, pemKey: TestCredentials.providerKeyPEM))!
            .publicKeyPEM
    }

    /// A simulator configuration serving the test server certificate and accepting the test provider key.
    public static func simulatorConfiguration() -> APNSSimulatorConfiguration {
        APNSSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM,
            providerKeys: [
                TestCredentials.keyID: .init(teamID: TestCredentials.teamID, publicKeyPEM: providerPublicKeyPEM)
            ]
        )
    }

    /// Starts a simulator with `configure` applied, returning it and its port.
    public static func startSimulator(
        logger: Logger = Logger(label: "test.apns-sim"),
        _ configure: (inout APNSSimulatorConfiguration) -> Void = { _ in }
    ) async throws -> (APNSSimulator, Int) {
        var configuration = simulatorConfiguration()
        configure(&configuration)
        let simulator = APNSSimulator(
            configuration: configuration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        )
        return (simulator, try await simulator.start())
    }

    /// Writes the test key and CA into a fresh temporary directory and returns an apps file for `apps` pointing at
    /// the simulator on `port`, with that directory to resolve its relative paths against.
    public static func appsFile(apps: [String], port: Int) throws -> (AppsFile, directory: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(TestServices.uniqueName("herald-apps")).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try TestCredentials.providerKeyPEM.write(toFile: directory + "/key.p8", atomically: true, encoding: .utf8)
        try TestCredentials.caCertificatePEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        let file = AppsFile(
            apps: apps.map { app in
                AppConfiguration(
                    id: app,
                    topic: app,
                    environment: .sandbox,
                    endpoint: "https://127.0.0.1:\(port)",
                    caFile: "ca.pem",
                    auth: .token(teamID: TestCredentials.teamID, keyID: TestCredentials.keyID, keyFile: "key.p8")
                )
            }
        )
        return (file, directory)
    }
}
