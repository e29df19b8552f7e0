import Foundation
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// Typos and failures named by their cause: an app id the apps file does not list, a port already taken, and
/// PostgreSQL refusing the connection, each as one sentence from the built binary.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct CauseCLITests {
    static let app = "com.example.news"

    /// An apps file listing `com.example.news`, and its directory (delete it afterwards).
    static func appsFile() throws -> (path: String, directory: String) {
        let (apps, directory) = try TestAPNs.appsFile(apps: [app], port: 2197)
        let path = directory + "/apps.json"
        try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: path))
        return (path, directory)
    }

    @Test func keysCreateRefusesAnAppTheAppsFileDoesNotListAndNamesTheNearest() async throws {
        let (path, directory) = try Self.appsFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let typo = try await HeraldBinary.run([
                "keys", "create", "--app", "com.exampel.news", "--scope", "send", "--apps-file", path, "--database-url",
                url,
            ])
            #expect(typo.status != 0)
            #expect(
                typo.stderr.contains("app com.exampel.news is not in the apps file \(path); did you mean \(Self.app)?"),
                "\(typo.stderr)")
            #expect(try await store.apiKeys(app: "com.exampel.news").isEmpty)
            // Given through the environment as well; and an app the file lists is taken.
            let listed = try await HeraldBinary.run(
                ["keys", "create", "--app", Self.app, "--scope", "send", "--database-url", url],
                environment: ["HERALD_APPS_FILE": path])
            #expect(listed.status == 0, "\(listed.stderr)")
            // Without an apps file every app id is taken, as before.
            let unchecked = try await HeraldBinary.run(
                ["keys", "create", "--app", "com.exampel.news", "--scope", "send", "--database-url", url],
                removing: ["HERALD_APPS_FILE"])
            #expect(unchecked.status == 0, "\(unchecked.stderr)")
        }
    }

    @Test func publishRefusesAnAppTheAppsFileDoesNotListFromFlagsAndFromAFile() async throws {
        let (path, directory) = try Self.appsFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let prefix = TestServices.uniqueName("cause")
        let connection = try await AMQPConnection.connect(
            try AMQPConfiguration(url: TestServices.amqpURL), logger: Logger(label: "test.cause"))
        _ = try await connection.declareQueue(prefix + ".jobs", durable: true)
        let common = ["--queue-prefix", prefix, "--amqp-url", TestServices.amqpURL, "--apps-file", path]

        let typo = try await HeraldBinary.run(
            ["publish", "--app", "com.example.nws", "--all", "--alert", "x"] + common)
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("app com.example.nws is not in the apps file"), "\(typo.stderr)")
        #expect(typo.stderr.contains("did you mean \(Self.app)?"))

        let file = directory + "/jobs.jsonl"
        try [
            #"{"id": "ok", "app": "com.example.news", "target": {"all": true}, "notification": {"aps": {"alert": "a"}}}"#,
            #"{"id": "typo", "app": "com.example.nwes", "target": {"all": true}, "notification": {"aps": {"alert": "a"}}}"#,
        ].joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let lines = try await HeraldBinary.run(["publish", "--file", file] + common)
        #expect(lines.status == 0, "\(lines.stderr)")
        #expect(lines.stdout.contains("publish: 1 published, 1 rejected"), "\(lines.stdout)")
        #expect(lines.stderr.contains("line 2: app com.example.nwes is not in the apps file"), "\(lines.stderr)")
        #expect(try await connection.queueMessageCount(prefix + ".jobs") == 1)
        try await connection.deleteQueue(prefix + ".jobs")
        await connection.close()
    }

    @Test func anAppsFileWithATypoStopsTheWorkerNamingTheFieldAndTheNearestKnownOne() async throws {
        let (path, directory) = try Self.appsFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: #""topic""#, with: #""max_per_secnd":10,"topic""#)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await HeraldBinary.run([
            "worker", "--apps-file", path, "--amqp-url", TestServices.amqpURL, "--database-url",
            TestServices.databaseURL,
        ])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("unknown field max_per_secnd in app \(Self.app); did you mean max_per_second?"),
            "\(result.stderr)")
        let doctor = try await HeraldBinary.run(["doctor", "--apps-file", path])
        #expect(doctor.stdout.contains("FAIL apps file: \(path) is not a valid apps file: unknown field max_per_secnd"))
    }

    @Test func aPortInUseNamesTheAddressThePortAndTheSettingThatChoseIt() async throws {
        let (simulator, port) = try await TestAPNs.startSimulator()
        defer { Task { try? await simulator.stop() } }
        let (path, directory) = try Self.appsFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TemporaryDatabase.withMigratedStore { _, database in
            try await Self.portInUse(
                port, directory: directory, path: path, database: HeraldBinary.databaseURL(database))
        }
    }

    static func portInUse(_ port: Int, directory: String, path: String, database: String) async throws {
        let services = ["--amqp-url", TestServices.amqpURL, "--database-url", database]
        try TestCredentials.serverCertificatePEM.write(
            toFile: directory + "/server.pem", atomically: true, encoding: .utf8)
        try TestCredentials.serverPrivateKeyPEM.write(
            toFile: directory + "/server-key.pem", atomically: true, encoding: .utf8)
        let workerPrefix = TestServices.uniqueName("cause")
        let cases: [([String], String)] = [
            (
                ["api", "--port", String(port)] + services,
                "the API cannot listen on 127.0.0.1 port \(port) (set by --port): the address is already in use by "
                    + "another process; stop that process or choose another port with --port (api.port, "
                    + "HERALD_API_PORT)"
            ),
            (
                ["worker", "--apps-file", path, "--metrics-port", String(port), "--queue-prefix", workerPrefix]
                    + services,
                "the worker's metrics and health server cannot listen on 127.0.0.1 port \(port) (set by "
                    + "--metrics-port): the address is already in use by another process; stop that process or "
                    + "choose another port with --metrics-port (metrics.port, HERALD_METRICS_PORT)"
            ),
            (
                [
                    "apns-sim", "--port", String(port), "--certificate", directory + "/server.pem",
                    "--private-key", directory + "/server-key.pem",
                ],
                "the APNs simulator cannot listen on 127.0.0.1 port \(port)"
            ),
        ]
        for (arguments, sentence) in cases {
            let result = try await HeraldBinary.run(arguments)
            #expect(result.status != 0)
            #expect(result.stderr.contains(sentence), "\(arguments[0]): \(result.stderr)")
            #expect(!result.stderr.contains("IOError"), "\(result.stderr)")
        }
        // The worker declared its queues before its metrics server failed.
        let connection = try await AMQPConnection.connect(
            try AMQPConfiguration(url: TestServices.amqpURL), logger: Logger(label: "test.cause"))
        try? await Topology(prefix: workerPrefix).delete(on: connection)
        await connection.close()
    }

    @Test func migrateAndTheAPIReportPostgreSQLsRefusalAtOnce() async throws {
        var wrongPassword = URLComponents(string: TestServices.databaseURL)!
        wrongPassword.password = "not-the-password"
        let server = try DatabaseConfiguration(url: TestServices.databaseURL)
        let cases: [(String, String)] = [
            (wrongPassword.string!, "password authentication failed for user \"\(server.username)\" [28P01]"),
            (
                server.with(database: "herald_no_such_database").url,
                "database \"herald_no_such_database\" does not exist [3D000]"
            ),
        ]
        for (url, sentence) in cases {
            let result = try await HeraldBinary.run([
                "migrate", "--database-url", url, "--schemas", TestServices.schemasDirectory,
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("refused the connection: \(sentence)"), "\(result.stderr)")
            #expect(!result.stderr.contains("not-the-password"))
        }
        // A long-running command checks before it starts its services.
        let api = try await HeraldBinary.run([
            "api", "--port", "0", "--database-url", wrongPassword.string!, "--amqp-url", TestServices.amqpURL,
        ])
        #expect(api.status != 0)
        #expect(api.stderr.contains("refused the connection: password authentication failed"), "\(api.stderr)")
    }
}
