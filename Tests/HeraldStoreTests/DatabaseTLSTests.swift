import Foundation
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// `sslmode` as libpq defines the modes Herald accepts, against the dev PostgreSQL's TLS listener (its certificate
/// names "localhost" only and is signed by the dev CA, which also signs the broker's: deploy/dev/services.sh):
/// certificates are always checked, `prefer` and `allow` are refused, and a bad `sslrootcert` is named.
@Suite(.needsServices) struct DatabaseTLSTests {
    static let environment = ProcessInfo.processInfo.environment
    static let tlsDirectory = TestServices.repositoryRoot + "/.state/rabbitmq/tls"
    static let caFile = environment["HERALD_TEST_AMQPS_CA_FILE"] ?? tlsDirectory + "/ca.pem"
    static let otherCAFile = environment["HERALD_TEST_AMQPS_OTHER_CA_FILE"] ?? tlsDirectory + "/other-ca.pem"

    /// The test server's URL with `host` and the query `query`.
    static func url(host: String, _ query: String) throws -> String {
        var components = try #require(URLComponents(string: TestServices.databaseURL))
        components.host = host
        components.percentEncodedQuery = query.isEmpty ? nil : query
        return try #require(components.string)
    }

    /// Connects once with `url` (the pool's TLS settings, on a single connection, which fails rather than retries)
    /// and says whether the session is encrypted (`pg_stat_ssl`).
    static func sessionUsesTLS(_ url: String) async throws -> Bool {
        let database = try DatabaseConfiguration(url: url)
        let logger = Logger(label: "test.tls")
        let configuration = try database.connectionConfiguration()
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let rows = try await connection.query(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
            var ssl = false
            for try await value in rows.decode(Bool.self) { ssl = value }
            try await connection.close()
            return ssl
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @Test func verifyFullConnectsOverTLSToTheNameTheCertificateCarries() async throws {
        let ca = "sslmode=verify-full&sslrootcert=\(Self.caFile)"
        #expect(try await Self.sessionUsesTLS(try Self.url(host: "localhost", ca)))
        // require checks the certificate as verify-full does.
        #expect(
            try await Self.sessionUsesTLS(try Self.url(host: "localhost", "sslmode=require&sslrootcert=\(Self.caFile)"))
        )
        // verify-ca checks the chain, not the name.
        #expect(
            try await Self.sessionUsesTLS(
                try Self.url(host: "127.0.0.1", "sslmode=verify-ca&sslrootcert=\(Self.caFile)")))
        #expect(try await !Self.sessionUsesTLS(try Self.url(host: "127.0.0.1", "sslmode=disable")))
    }

    @Test func aCertificateThatDoesNotCheckOutIsRefused() async throws {
        // Another name than the certificate's.
        await #expect(throws: (any Error).self) {
            try await Self.sessionUsesTLS(
                try Self.url(host: "127.0.0.1", "sslmode=verify-full&sslrootcert=\(Self.caFile)"))
        }
        // A CA that did not sign it, with and without the host name checked.
        for mode in ["verify-full", "verify-ca"] {
            await #expect(throws: (any Error).self) {
                try await Self.sessionUsesTLS(
                    try Self.url(host: "localhost", "sslmode=\(mode)&sslrootcert=\(Self.otherCAFile)"))
            }
        }
        // require without a root certificate: the system's trust store does not know the dev CA.
        await #expect(throws: (any Error).self) {
            try await Self.sessionUsesTLS(try Self.url(host: "localhost", "sslmode=require"))
        }
    }

    @Test func modesThatFallBackToPlainTextAndBadParametersAreRefusedWithASentence() throws {
        func refusal(_ query: String) throws -> String? {
            do {
                _ = try DatabaseConfiguration(url: "postgres://u:secret@db.example/herald?\(query)")
                return nil
            } catch {
                #expect(!error.description.contains("secret"))
                return error.message
            }
        }
        for mode in ["prefer", "allow"] {
            #expect(try refusal("sslmode=\(mode)")?.contains("falls back to plain TCP") == true)
        }
        #expect(try refusal("sslmode=strict")?.contains("use disable, require, verify-ca or verify-full") == true)
        #expect(
            try refusal("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
                == "sslrootcert /nonexistent/ca.pem: no readable file there")
        #expect(
            try refusal("sslmode=verify-full&sslrootcert=\(TestServices.schemasDirectory)/001_initial.sql")?
                .contains("is not a file of PEM certificates") == true)
        #expect(try refusal("sslrootcert=\(Self.caFile)")?.contains("sslmode is disable") == true)
        #expect(try refusal("connect_timeout=5")?.contains("Herald reads sslmode and sslrootcert") == true)
        // verify-ca checks no host name: without a root certificate of its own, any public certificate would pass.
        #expect(try refusal("sslmode=verify-ca")?.hasPrefix("sslmode=verify-ca needs sslrootcert") == true)
        // A URL that is accepted keeps its mode and root certificate file on the way to a child process.
        let parsed = try DatabaseConfiguration(
            url: "postgres://u@db.example/h?sslmode=verify-ca&sslrootcert=\(Self.caFile)")
        let again = try DatabaseConfiguration(url: parsed.url)
        #expect(again.tlsMode == .verifyCA && again.rootCertificateFile == Self.caFile)
    }
}
