import Foundation
import Logging
import PostgresNIO

/// One migration file: `NNN_name.sql`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String

    /// Reads every `NNN_name.sql` in `directory`, in version order; rejects duplicate versions.
    public static func load(from directory: String) throws(StoreError) -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw StoreError(.migrationFailed, "cannot list migrations in \(directory)")
        }
        var migrations: [Migration] = []
        for name in names where name.hasSuffix(".sql") {
            guard let version = Int(name.prefix(while: { $0.isNumber })), version > 0 else {
                throw StoreError(.migrationFailed, "migration \(name) does not start with a version number")
            }
            guard let sql = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else {
                throw StoreError(.migrationFailed, "cannot read migration \(name)")
            }
            migrations.append(Migration(version: version, name: name, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) where a.version == b.version {
            throw StoreError(.migrationFailed, "migrations \(a.name) and \(b.name) share version \(a.version)")
        }
        return migrations
    }
}

extension Store {
    /// Applies the migrations not yet recorded in `herald_migrations`, each in its own transaction with its record.
    /// Safe to run from several processes at once: an advisory lock serialises them.
    ///
    /// - Returns: the migrations applied now.
    @discardableResult
    public func migrate(_ migrations: [Migration]) async throws(StoreError) -> [Migration] {
        try await run("creating the migrations table", code: .migrationFailed) {
            try await client.query(
                """
                CREATE TABLE IF NOT EXISTS herald_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """,
                logger: logger
            )
        }
        var applied: [Migration] = []
        for migration in migrations {
            let didApply = try await run("migration \(migration.name)", code: .migrationFailed) {
                try await client.withTransaction(logger: logger) { connection in
                    // 0x4845524c = "HERL": one migrator at a time across processes.
                    try await connection.query("SELECT pg_advisory_xact_lock(1212502604)", logger: logger)
                    let rows = try await connection.query(
                        "SELECT 1 FROM herald_migrations WHERE version = \(migration.version)",
                        logger: logger
                    )
                    for try await _ in rows { return false }
                    for statement in SQLScript.statements(in: migration.sql) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO herald_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger
                    )
                    return true
                }
            }
            if didApply {
                logger.info("migration applied", metadata: ["migration": "\(migration.name)"])
                applied.append(migration)
            }
        }
        return applied
    }
}
