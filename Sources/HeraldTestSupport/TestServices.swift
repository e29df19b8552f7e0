import Foundation
import HeraldStore
import Logging
import PostgresNIO

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
        prefix + "_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}

/// A throwaway database, created and migrated for one test, dropped afterwards.
public enum TemporaryDatabase {
    /// Creates a fresh database, applies the migrations, runs `body` with a running store, and drops the database.
    public static func withMigratedStore<T: Sendable>(
        logger: Logger = Logger(label: "test"),
        _ body: (Store, DatabaseConfiguration) async throws -> T
    ) async throws -> T {
        let server = try DatabaseConfiguration(url: TestServices.databaseURL)
        let name = TestServices.uniqueName("herald_test")
        try await admin(server, logger: logger) { client in
            try await client.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        let configuration = server.with(database: name)
        do {
            let result = try await Store.withStore(configuration, logger: logger) { store in
                try await store.migrate(try Migration.load(from: TestServices.schemasDirectory))
                return try await body(store, configuration)
            }
            try await drop(name, server: server, logger: logger)
            return result
        } catch {
            try? await drop(name, server: server, logger: logger)
            throw error
        }
    }

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
