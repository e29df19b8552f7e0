import HeraldStore
import Logging
import NIOCore
import PostgresNIO

extension Doctor {
    /// The database: the URL parses, the server accepts the login to the database, and every migration of the
    /// schemas directory is applied (none pending, none unknown). Nothing is written.
    func checkDatabase() async -> [DoctorFinding] {
        let url: String
        switch deployment.databaseURL {
        case .success(let given): url = given
        case .failure(let unresolved): return [.fail("database", unresolved.message)]
        }
        let configuration: DatabaseConfiguration
        var settings: PostgresConnection.Configuration
        do {
            configuration = try DatabaseConfiguration(url: url)
            settings = try configuration.connectionConfiguration()
        } catch {
            return [
                .fail(
                    "database",
                    "the database URL is not valid (\(error.message)): fix --database-url or HERALD_DATABASE_URL")
            ]
        }
        settings.options.connectTimeout = TimeAmount(deployment.timeout)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: eventLoopGroup.any(), configuration: settings, id: 1, logger: logger)
        } catch {
            return [.fail("database", Self.databaseFailure(error, configuration))]
        }
        var findings = [
            DoctorFinding.pass(
                "database", "connected to \(Self.place(configuration)) as \(configuration.username)")
        ]
        findings += await checkMigrations(on: connection)
        try? await connection.close()
        return findings
    }

    /// `127.0.0.1:55432 database herald (sslmode disable)`: never the password.
    static func place(_ configuration: DatabaseConfiguration) -> String {
        "\(configuration.host):\(configuration.port) database \(configuration.database) "
            + "(sslmode \(configuration.tlsMode.rawValue))"
    }

    /// `herald_migrations` against the files of the schemas directory.
    func checkMigrations(on connection: PostgresConnection) async -> [DoctorFinding] {
        let directory = deployment.schemasDirectory
        let migrations: [Migration]
        do {
            migrations = try Migration.load(from: directory)
        } catch {
            return [
                .fail(
                    "database",
                    "cannot compare the migrations: \(error.message); pass --schemas or set HERALD_SCHEMAS_DIR to "
                        + "the release's schemas directory")
            ]
        }
        var applied: [(version: Int, name: String)] = []
        do {
            let rows = try await connection.query(
                "SELECT version, name FROM herald_migrations ORDER BY version", logger: logger)
            for try await (version, name) in rows.decode((Int, String).self) { applied.append((version, name)) }
        } catch {
            if let psql = error as? PSQLError, psql.serverInfo?[.sqlState] == "42P01" {
                return [
                    .fail(
                        "database",
                        "no migration is applied (there is no herald_migrations table): run herald migrate "
                            + "--schemas \(directory) before starting workers and the API")
                ]
            }
            return [.fail("database", "reading herald_migrations failed: " + Self.serverFailure(error))]
        }
        let appliedVersions = Set(applied.map(\.version))
        let known = Set(migrations.map(\.version))
        let pending = migrations.filter { !appliedVersions.contains($0.version) }.map(\.name)
        let unknown = applied.filter { !known.contains($0.version) }.map(\.name)
        var findings: [DoctorFinding] = []
        if !pending.isEmpty {
            findings.append(
                .fail(
                    "database",
                    "\(pending.count) migration\(pending.count == 1 ? " is" : "s are") pending: "
                        + pending.joined(separator: ", ") + "; run herald migrate --schemas \(directory) before "
                        + "starting workers and the API (docs/operations.md, Rolling upgrade)"))
        }
        if !unknown.isEmpty {
            findings.append(
                .warn(
                    "database",
                    "the database has migrations that \(directory) does not: " + unknown.joined(separator: ", ")
                        + "; it is newer than this release's schemas: check --schemas / HERALD_SCHEMAS_DIR and the "
                        + "release you run"))
        }
        if findings.isEmpty {
            let last = migrations.last.map { ", the last \($0.name)" } ?? ""
            findings.append(
                .pass("database", "migrations current: \(applied.count) applied\(last) (schemas \(directory))"))
        }
        return findings
    }

    /// Why connecting or logging in failed, as a sentence with the fix.
    static func databaseFailure(_ error: any Error, _ configuration: DatabaseConfiguration) -> String {
        let place = "\(configuration.host):\(configuration.port)"
        let fix = "--database-url / HERALD_DATABASE_URL"
        if let psql = error as? PSQLError {
            if let state = psql.serverInfo?[.sqlState] {
                return "PostgreSQL at \(place) refused the connection: "
                    + sqlStateMeaning(state, configuration: configuration, server: psql.serverInfo?[.message])
            }
            switch psql.code {
            case .connectionError:
                let reason = psql.underlying.map(DoctorNetworkReason.describe) ?? "no answer"
                if let underlying = psql.underlying, DoctorNetworkReason.tls(underlying) == .untrusted {
                    return "cannot connect to PostgreSQL at \(place) (\(reason)): give the CA that signed the "
                        + "server's certificate as sslrootcert in \(fix), and use the host name it names"
                }
                return "cannot connect to PostgreSQL at \(place) (\(reason)): check that the server runs there "
                    + "and that \(fix) names it"
            case .sslUnsupported:
                return "PostgreSQL at \(place) does not offer TLS, which sslmode \(configuration.tlsMode.rawValue) "
                    + "requires: turn ssl on in postgresql.conf, or use sslmode=disable in \(fix) on a private network"
            case .authMechanismRequiresPassword:
                return "PostgreSQL at \(place) asks user \(configuration.username) for a password and the URL has "
                    + "none: add it to \(fix)"
            case .unsupportedAuthMechanism:
                return "PostgreSQL at \(place) asks for an authentication method Herald does not support: use "
                    + "scram-sha-256 or md5 for user \(configuration.username) in pg_hba.conf"
            case .saslError:
                return "SCRAM authentication of user \(configuration.username) at \(place) failed: check the "
                    + "password in \(fix)"
            default:
                return "PostgreSQL at \(place) closed the connection during start-up (\(psql.code)): check the "
                    + "server's log and \(fix)"
            }
        }
        return "cannot connect to PostgreSQL at \(place) (\(DoctorNetworkReason.describe(error))): check \(fix)"
    }

    /// What a SQLSTATE of a failed connection means, with the fix.
    static func sqlStateMeaning(
        _ state: String, configuration: DatabaseConfiguration, server: String?
    ) -> String {
        let user = configuration.username
        let fix = "--database-url / HERALD_DATABASE_URL"
        switch state {
        case "28P01":
            return "password authentication failed for user \(user) [28P01]: fix the password in \(fix)"
        case "28000":
            return "no pg_hba.conf entry lets user \(user) reach database \(configuration.database) from here "
                + "[28000]: add one (hostssl entries need an sslmode other than disable in \(fix))"
        case "3D000":
            return "database \(configuration.database) does not exist [3D000]: create it (createdb -O \(user) "
                + "\(configuration.database)) or fix the database name in \(fix)"
        case "42501":
            return "user \(user) may not connect to database \(configuration.database) [42501]: GRANT CONNECT ON "
                + "DATABASE \(configuration.database) TO \(user)"
        case "53300":
            return "it has no connection slot left [53300]: raise max_connections or lower the workers' pools"
        case "57P03":
            return "it is starting up or shutting down [57P03]: try again once it is up"
        default:
            return "\(server ?? "an error") [\(state)]: check \(fix) and the server's log"
        }
    }

    /// A failed statement: PostgreSQL's own message and SQLSTATE, never the error's description.
    static func serverFailure(_ error: any Error) -> String {
        guard let psql = error as? PSQLError else { return DoctorNetworkReason.describe(error) }
        if let state = psql.serverInfo?[.sqlState] {
            return "\(psql.serverInfo?[.message] ?? "an error") [\(state)]"
        }
        return psql.underlying.map(DoctorNetworkReason.describe) ?? "the connection was lost (\(psql.code))"
    }
}
