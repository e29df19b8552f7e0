import Crypto
import Foundation
import HeraldCore
import HeraldStore
import Logging
import PostgresNIO
import Synchronization

/// The real services `make test` starts (deploy/dev/services.sh), read from the environment with the dev defaults.
public enum TestServices {
    /// The broker: `HERALD_TEST_AMQP_URL`, else the dev node.
    public static var amqpURL: String {
        ProcessInfo.processInfo.environment["HERALD_TEST_AMQP_URL"] ?? "amqp://herald:herald-dev@127.0.0.1:56720/%2f"
    }

    /// The database server: `HERALD_TEST_DATABASE_URL`, else the dev cluster.
    public static var databaseURL: String {
        ProcessInfo.processInfo.environment["HERALD_TEST_DATABASE_URL"]
            ?? "postgres://herald:herald-dev@127.0.0.1:55432/herald"
    }

    /// The repository root, found from this file's path.
    public static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// The migrations directory.
    public static var schemasDirectory: String { repositoryRoot + "/schemas" }

    /// A short random suffix for names that must not collide between tests.
    public static func uniqueName(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()  // a name, not chance
        return prefix + "_" + String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 36)
    }
}

/// A throwaway database, created and migrated for one test, dropped afterwards.
///
/// Each is a copy of a template database migrated once per set of migrations (`herald_template_<hash>`): about
/// a hundred tests each ran every migration before, which was a good part of what `make test` spent in PostgreSQL.
public enum TemporaryDatabase {
    /// Creates a fresh database with the migrations applied, runs `body` with a running store, and drops the
    /// database.
    public static func withMigratedStore<T: Sendable>(
        logger: Logger = Logger(label: "test"),
        _ body: (Store, DatabaseConfiguration) async throws -> T
    ) async throws -> T {
        let server = try DatabaseConfiguration(url: TestServices.databaseURL)
        let template = try await migratedTemplate(server: server, logger: logger)
        let name = TestServices.uniqueName("herald_test")
        try await admin(server, logger: logger) { client in
            try await client.query("CREATE DATABASE \(unescaped: name) TEMPLATE \(unescaped: template)", logger: logger)
        }
        let configuration = server.with(database: name)
        do {
            let result = try await Store.withStore(configuration, logger: logger) { store in
                try await body(store, configuration)
            }
            try await drop(name, server: server, logger: logger)
            return result
        } catch {
            try? await drop(name, server: server, logger: logger)
            throw error
        }
    }

    /// The template of this process's migrations, created if no process has yet: named by a hash of the
    /// migrations, built under another name and renamed when complete (a build that died half-way is never used),
    /// under an advisory lock (test processes run side by side). Templates of other migrations are dropped then.
    private static func migratedTemplate(server: DatabaseConfiguration, logger: Logger) async throws -> String {
        if let name = templateName.withLock({ $0 }) { return name }
        let migrations = try Migration.load(from: TestServices.schemasDirectory)
        // Every migration's name and text, each ended by a NUL.
        let digest = SHA256.hash(data: Array(migrations.map { $0.name + "\u{0}" + $0.sql + "\u{0}" }.joined().utf8))
        let name = "herald_template_" + digest.prefix(8).map { String(format: "%02x", $0) }.joined()
        let building = name + "_building"
        try await admin(server, logger: logger) { client in
            try await client.withConnection { connection in
                try await connection.query("SELECT pg_advisory_lock(\(templateLock))", logger: logger)
                do {
                    let existing = try await connection.query(
                        "SELECT datname FROM pg_database WHERE datname LIKE 'herald\\_template\\_%'", logger: logger
                    ).collect().map { try $0.decode(String.self) }
                    if !existing.contains(name) {
                        for stale in existing {
                            try await connection.query("DROP DATABASE \(unescaped: stale)", logger: logger)
                        }
                        try await connection.query("CREATE DATABASE \(unescaped: building)", logger: logger)
                        _ = try await Store.withStore(server.with(database: building), logger: logger) { store in
                            try await store.migrate(migrations)
                        }
                        // The migrating pool's sessions end just after it stops: rename once they have.
                        while try await connection.query(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = \(building)", logger: logger
                        ).collect().first?.decode(Int.self) != 0 {
                            try await HeraldClock.system.sleep(.milliseconds(20))
                        }
                        try await connection.query(
                            "ALTER DATABASE \(unescaped: building) RENAME TO \(unescaped: name)", logger: logger)
                    }
                } catch {
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(templateLock))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(\(templateLock))", logger: logger)
            }
        }
        templateName.withLock { $0 = name }
        return name
    }

    /// The advisory lock under which a template is built: "HTPL".
    private static let templateLock: Int64 = 0x4854_504C
    private static let templateName = Mutex<String?>(nil)

    private static func admin(
        _ server: DatabaseConfiguration,
        logger: Logger,
        _ body: (PostgresClient) async throws -> Void
    ) async throws {
        var configuration = server.clientConfiguration
        configuration.options.maximumConnections = 1
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await body(client)
        }
    }

    /// Drops the database even if the store's connections are still closing. PostgreSQL 15 refuses `FORCE` to a
    /// non-superuser when an autovacuum worker happens to be in the new database ("must be a member of the role
    /// whose process is being terminated"); a plain DROP then stops the worker itself.
    private static func drop(_ name: String, server: DatabaseConfiguration, logger: Logger) async throws {
        try await admin(server, logger: logger) { client in
            do {
                try await client.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)", logger: logger)
            } catch {
                try await client.query("DROP DATABASE IF EXISTS \(unescaped: name)", logger: logger)
            }
        }
    }
}
