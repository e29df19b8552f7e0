import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import RabbitMQ
import Testing

@testable import HeraldDoctor

/// `herald doctor` against a good deployment on the real services and against each way of breaking it: every
/// broken part fails with its sentence, and the other checks still pass.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct DoctorTests {
    static let app = DoctorFixture.app

    @Test func aGoodDeploymentPassesEveryCheckAndChangesNothing() async throws {
        try await DoctorFixture.with { fixture in
            let report = await fixture.run()
            #expect(report.failed == 0, "\(report.text)")
            #expect(report.warnings == 0, "\(report.text)")
            #expect(report.exitStatus(strict: true) == 0)
            let lines = report.findings.map(\.line)
            let broker = try AMQPConfiguration(url: TestServices.amqpURL)
            #expect(lines.contains("PASS broker: logged in to \(broker.host):\(broker.port) vhost / as \(broker.user)"))
            #expect(
                lines.contains { $0.hasPrefix("PASS broker: topology present: exchange \(fixture.topology.events)") })
            #expect(lines.contains { $0.hasPrefix("PASS database: connected to ") })
            #expect(lines.contains { $0.hasPrefix("PASS database: migrations current: ") })
            #expect(lines.contains { $0.hasPrefix("PASS apps file: \(fixture.appsFile) parses: 1 app(s)") })
            #expect(
                lines.contains(
                    "PASS app \(Self.app): key_file \(fixture.directory)/key.p8 is a P-256 key; team \(TestCredentials.teamID), key \(TestCredentials.keyID); a provider token signs and verifies"
                ))
            #expect(
                lines.contains(
                    "PASS app \(Self.app): the sandbox endpoint 127.0.0.1:\(fixture.port) answers TLS + HTTP/2 (ALPN h2) with a certificate trusted by the system roots and ca_file \(fixture.directory)/ca.pem"
                ))
            #expect(report.summary == "doctor: \(report.passed) passed, 0 failed, 0 warnings")
            #expect(report.passed == 7)
            // Neither password appears, and nothing was sent.
            let database = try DatabaseConfiguration(url: try fixture.deployment.databaseURL.get())
            #expect(!report.text.contains(broker.password))
            #expect(!report.text.contains(try #require(database.password)))
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func aKeyFileThatIsNotAP256KeyFailsNamingTheFile() async throws {
        try await DoctorFixture.with { fixture in
            try fixture.write(TestCredentials.caCertificatePEM, to: "key.p8")
            let report = await fixture.run()
            #expect(report.failed == 1, "\(report.text)")
            #expect(
                report.findings.map(\.line).contains(
                    "FAIL app \(Self.app): key_file \(fixture.directory)/key.p8 is not a P-256 private key (PEM "
                        + "\"PRIVATE KEY\"): point key_file at the AuthKey_<key id>.p8 file downloaded from the Apple "
                        + "Developer account (Keys)"))
            #expect(report.exitStatus(strict: false) == 1)
        }
    }

    @Test func malformedTeamAndKeyIdsFailEachWithTheirRule() async throws {
        try await DoctorFixture.with { fixture in
            var apps = try AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: fixture.appsFile)))
            apps.apps[0].auth = .token(teamID: "team123456", keyID: "KEY12", keyFile: "key.p8")
            try fixture.write(apps)
            let lines = await fixture.run().findings.filter { $0.status == .fail }.map(\.message)
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("team_id \"team123456\" is not 10 characters of A-Z and 0-9") })
            #expect(lines.contains { $0.hasPrefix("key_id \"KEY12\" is not 10 characters of A-Z and 0-9") })
        }
    }

    @Test func aCAThatDidNotSignTheEndpointsCertificateFailsTheEndpoint() async throws {
        try await DoctorFixture.with { fixture in
            try fixture.write(TestCredentials.unrelatedCACertificatePEM, to: "ca.pem")
            let report = await fixture.run()
            #expect(report.failed == 1, "\(report.text)")
            let failure = try #require(report.findings.first { $0.status == .fail })
            #expect(failure.subject == "app \(Self.app)")
            #expect(
                failure.message
                    == "the certificate of the sandbox endpoint 127.0.0.1:\(fixture.port) is not trusted by the "
                    + "system roots and ca_file \(fixture.directory)/ca.pem, or does not name 127.0.0.1: set ca_file to "
                    + "the CA that signed it (Apple's hosts need none), or fix endpoint in the apps file")
        }
    }

    @Test func anUnreachableBrokerFailsWithTheAddressAndNoPassword() async throws {
        try await DoctorFixture.with { fixture in
            let port = try await DoctorFixture.closedPort()
            var url = URLComponents(string: TestServices.amqpURL)!
            url.port = port
            fixture.deployment.amqpURL = .success(try #require(url.string))
            let report = await fixture.run()
            let broker = report.findings.filter { $0.subject == "broker" }
            #expect(
                broker.map(\.line) == [
                    "FAIL broker: cannot connect to the broker at 127.0.0.1:\(port) vhost / (connection refused): check "
                        + "that RabbitMQ runs there and that --amqp-url / HERALD_AMQP_URL names it"
                ])
            #expect(report.failed == 1, "\(report.text)")
            #expect(!report.text.contains(try AMQPConfiguration(url: TestServices.amqpURL).password))
        }
    }

    @Test func aWrongBrokerPasswordFailsAsARefusedLogin() async throws {
        try await DoctorFixture.with { fixture in
            var url = URLComponents(string: TestServices.amqpURL)!
            url.password = "not-the-password"
            fixture.deployment.amqpURL = .success(try #require(url.string))
            let report = await fixture.run()
            let failure = try #require(report.findings.first { $0.subject == "broker" })
            #expect(failure.status == .fail)
            #expect(failure.message.contains("refused the login of user \(url.user ?? "")"))
            #expect(!report.text.contains("not-the-password"))
        }
    }

    @Test func aPendingMigrationFailsNamingItAndHowToApplyIt() async throws {
        try await DoctorFixture.with { fixture in
            try await DoctorFixture.withSchemas { directory in
                try "SELECT 1;".write(toFile: directory + "/999_x.sql", atomically: true, encoding: .utf8)
            } _: { directory in
                fixture.deployment.schemasDirectory = directory
                let report = await fixture.run()
                #expect(report.failed == 1, "\(report.text)")
                #expect(
                    report.findings.map(\.line).contains(
                        "FAIL database: 1 migration is pending: 999_x.sql; run herald migrate --schemas \(directory) "
                            + "before starting workers and the API (docs/operations.md, Rolling upgrade)"))
            }
        }
    }

    @Test func aMigrationTheSchemasDoNotHaveWarnsAndFailsOnlyWhenStrict() async throws {
        try await DoctorFixture.with { fixture in
            let last = try #require(Migration.load(from: TestServices.schemasDirectory).last)
            try await DoctorFixture.withSchemas { directory in
                try FileManager.default.removeItem(atPath: directory + "/" + last.name)
            } _: { directory in
                fixture.deployment.schemasDirectory = directory
                let report = await fixture.run()
                #expect(report.failed == 0, "\(report.text)")
                #expect(report.warnings == 1)
                #expect(report.findings.contains { $0.status == .warn && $0.message.contains(last.name) })
                #expect(report.exitStatus(strict: false) == 0)
                #expect(report.exitStatus(strict: true) == 1)
            }
        }
    }

    @Test func aMissingQueueFailsAndTheCheckDoesNotCreateIt() async throws {
        try await DoctorFixture.with { fixture in
            let queue = fixture.topology.retryQueue(after: 2)
            try await fixture.connection.deleteQueue(queue)
            let report = await fixture.run()
            #expect(report.failed == 1, "\(report.text)")
            #expect(
                report.findings.map(\.line).contains(
                    "FAIL broker: queue \(queue) does not exist: start a worker once with the same --queue-prefix and "
                        + "--queue-type (it declares the topology), or load deploy/rabbitmq/definitions.json (herald "
                        + "topology export)"))
            // The queues after the missing one were still checked (on a fresh channel), and it is still missing.
            #expect(!report.findings.contains { $0.line.hasPrefix("PASS broker: topology present") })
            let error = await #expect(throws: AMQPError.self) { try await fixture.connection.queueMessageCount(queue) }
            #expect(error?.replyCode == 404)
        }
    }

    @Test func queuesOfAnotherTypeFailAsOtherSettings() async throws {
        try await DoctorFixture.with { fixture in
            fixture.deployment.topology.queueType = .quorum
            let report = await fixture.run()
            let failures = report.findings.filter { $0.status == .fail }
            #expect(failures.count == fixture.topology.queues.count, "\(report.text)")
            #expect(
                failures.contains {
                    $0.message.hasPrefix(
                        "queue \(fixture.topology.jobs) exists with other settings than a durable quorum queue as "
                            + "--queue-type quorum declares it (PRECONDITION_FAILED")
                })
        }
    }

    @Test func aMissingEventsExchangeFails() async throws {
        try await DoctorFixture.with { fixture in
            try await fixture.connection.deleteExchange(fixture.topology.events)
            let report = await fixture.run()
            #expect(report.failed == 1, "\(report.text)")
            #expect(
                report.findings.contains {
                    $0.line.hasPrefix("FAIL broker: exchange \(fixture.topology.events) does not exist")
                })
        }
    }

    @Test func aMissingDatabaseFailsWithTheMeaningOfItsSQLState() async throws {
        try await DoctorFixture.with { fixture in
            let server = try DatabaseConfiguration(url: TestServices.databaseURL)
            fixture.deployment.databaseURL = .success(server.with(database: "herald_no_such_database").url)
            let report = await fixture.run()
            #expect(
                report.findings.map(\.line).contains(
                    "FAIL database: PostgreSQL at \(server.host):\(server.port) refused the connection: database "
                        + "herald_no_such_database does not exist [3D000]: create it (createdb -O \(server.username) "
                        + "herald_no_such_database) or fix the database name in --database-url / HERALD_DATABASE_URL"))
        }
    }

    @Test func aMissingAppsFileAndAnUnresolvedURLFailWithTheirFlags() async throws {
        try await DoctorFixture.with { fixture in
            fixture.deployment.appsFile = nil
            fixture.deployment.databaseURL = .failure(.init("--database-url is required (or set HERALD_DATABASE_URL)"))
            let report = await fixture.run()
            let lines = report.findings.map(\.line)
            #expect(lines.contains("FAIL apps file: no apps file: pass --apps-file or set HERALD_APPS_FILE"))
            #expect(lines.contains("FAIL database: --database-url is required (or set HERALD_DATABASE_URL)"))
            #expect(report.failed == 2)
        }
    }
}
