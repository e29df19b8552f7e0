import APNSSimulator
import Foundation
import HeraldCore
import HeraldDoctor
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import Logging
import NIOPosix
import RabbitMQ
import Testing

/// A deployment on the real services for one test: a topology of its own (a unique prefix) declared on the dev
/// broker, a migrated throwaway database, and the APNs simulator with the test CA behind an apps file of one token
/// app. Each test breaks one part of it.
struct DoctorFixture {
    static let app = "com.example.news"
    static let logger = Logger(label: "DoctorTests")

    var deployment: Doctor.Deployment
    /// The apps file's directory, with `key.p8` and `ca.pem`.
    let directory: String
    let topology: Topology
    let connection: AMQPConnection
    let simulator: APNSSimulator
    let port: Int

    var appsFile: String { directory + "/apps.json" }

    /// Runs `body` with a fresh fixture; tears down the topology and the simulator after it.
    static func with(
        simulator configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        _ body: (inout DoctorFixture) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.withMigratedStore(logger: logger) { _, database in
            let topology = Topology(prefix: TestServices.uniqueName("herald-doctor"))
            let connection = try await AMQPConnection.connect(
                AMQPConfiguration(url: TestServices.amqpURL), logger: logger)
            let (simulator, port) = try await TestAPNs.startSimulator(configure)
            let (apps, directory) = try TestAPNs.appsFile(apps: [app], port: port)
            var fixture = DoctorFixture(
                deployment: Doctor.Deployment(
                    amqpURL: .success(TestServices.amqpURL),
                    databaseURL: .success(database.url),
                    appsFile: directory + "/apps.json",
                    schemasDirectory: TestServices.schemasDirectory,
                    topology: topology
                ),
                directory: directory, topology: topology, connection: connection, simulator: simulator, port: port)
            do {
                try await topology.declare(on: connection)
                try fixture.write(apps)
                try await body(&fixture)
            } catch {
                await fixture.tearDown()
                throw error
            }
            await fixture.tearDown()
        }
    }

    private func tearDown() async {
        try? await topology.delete(on: connection)
        await connection.close()
        try? await simulator.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes `apps` as the apps file.
    func write(_ apps: AppsFile) throws {
        try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: appsFile))
    }

    /// Writes `text` to a file of the apps file's directory.
    func write(_ text: String, to name: String) throws {
        try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }

    /// Runs the doctor over the deployment.
    func run() async -> DoctorReport {
        await Doctor(deployment: deployment, logger: Self.logger).run()
    }

    /// A loopback port nothing listens on: bound, then closed.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }

    /// A copy of the schemas directory, changed by `change`, removed after `body`.
    static func withSchemas<T>(
        _ change: (String) throws -> Void, _ body: (String) async throws -> T
    ) async throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(TestServices.uniqueName("herald-schemas")).path
        try FileManager.default.copyItem(atPath: TestServices.schemasDirectory, toPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try change(directory)
        return try await body(directory)
    }
}
