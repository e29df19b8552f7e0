import Foundation
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// `herald doctor` as the built binary: its exit status for scripts and CI, `--json`, and no password in its output.
/// The checks themselves are tested in `HeraldDoctorTests`.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct DoctorCommandTests {
    @Test func aGoodDeploymentExitsZeroAndABrokenOneExitsOneWithJSON() async throws {
        try await TemporaryDatabase.withMigratedStore { _, database in
            let logger = Logger(label: "DoctorCommandTests")
            let topology = Topology(prefix: TestServices.uniqueName("herald-doctor-cli"))
            let connection = try await AMQPConnection.connect(
                AMQPConfiguration(url: TestServices.amqpURL), logger: logger)
            try await topology.declare(on: connection)
            let (simulator, port) = try await TestAPNs.startSimulator()
            let (apps, directory) = try TestAPNs.appsFile(apps: ["com.example.news"], port: port)
            try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: directory + "/apps.json"))
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let arguments = [
                "doctor", "--queue-prefix", topology.prefix, "--apps-file", directory + "/apps.json",
                "--schemas", TestServices.schemasDirectory, "--database-url", HeraldBinary.databaseURL(database),
                "--amqp-url", TestServices.amqpURL,
            ]

            let good = try await HeraldBinary.run(arguments + ["--strict"])
            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
            #expect(good.stdout.hasSuffix("doctor: 7 passed, 0 failed, 0 warnings\n"), "\(good.stdout)")

            var closed = URLComponents(string: TestServices.amqpURL)!
            closed.port = 1
            let broken = try await HeraldBinary.run(arguments + ["--amqp-url", closed.string!, "--json"])
            #expect(broken.status == 1)
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(broken.stdout.utf8)) as? [String: Any], "\(broken.stdout)")
            #expect(json["failed"] as? Int == 1)
            #expect(json["passed"] as? Int == 5)
            let password = try AMQPConfiguration(url: TestServices.amqpURL).password
            #expect(!good.stdout.contains(password) && !broken.stdout.contains(password))

            try await topology.delete(on: connection)
            await connection.close()
            try await simulator.stop()
        }
    }
}
