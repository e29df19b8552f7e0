import ArgumentParser
import HeraldCommandLine
import HeraldStore
import Logging
import PostgresNIO

/// `herald migrate`: apply the SQL migrations in `schemas/`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the SQL migrations in schemas/ that are not applied yet, each in a transaction."
    )

    @OptionGroup var services: ServiceOptions

    @OptionGroup var migration: MigrationOptions

    func run() async throws {
        let settings = try services.resolve(
            [.databaseURL, .schemasDirectory], required: [.databaseURL], with: [migration])
        let logger = ServiceOptions.makeLogger(label: "herald.migrate", configuration: settings)
        let migrations = try Migration.load(from: settings.requiredText(.schemasDirectory))
        let database = try DatabaseConfiguration(url: settings.requiredText(.databaseURL))
        let applied = try await withStore(database, logger: logger) { store in
            try await store.migrate(migrations)
        }
        print("migrations: \(applied.count) applied, \(migrations.count - applied.count) already present")
    }
}

/// Runs `body` with a store whose pool runs for the duration.
func withStore<T: Sendable>(
    _ database: DatabaseConfiguration,
    logger: Logger,
    _ body: (Store) async throws -> T
) async throws -> T {
    try await Store.withStore(database, logger: logger, body)
}

/// Fails at once with PostgreSQL's own error when the server refuses `database`'s connection for a reason waiting
/// does not cure (a wrong password, a database that does not exist: `Store.connectionRefusal`), before a long-running
/// command starts its services; a server that is down is waited for by them, as before.
func refuseUnusableDatabase(_ database: DatabaseConfiguration, logger: Logger) async throws {
    if let probe = try? database.connectionConfiguration(),
        let refusal = await Store.connectionRefusal(probe, logger: logger)
    {
        throw refusal
    }
}
