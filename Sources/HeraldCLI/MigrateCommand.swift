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

    @Option(help: "The directory of NNN_name.sql migrations (env HERALD_SCHEMAS_DIR).")
    var schemas: String?

    func run() async throws {
        let logger = services.makeLogger(label: "herald.migrate")
        let directory = schemas ?? Environment.get("HERALD_SCHEMAS_DIR") ?? "schemas"
        let migrations = try Migration.load(from: directory)
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
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
