import ArgumentParser
import Logging

/// The `herald` executable (`main.swift` starts it).
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Push-notification delivery pipeline for Apple devices: RabbitMQ in, PostgreSQL beside, APNs out.",
        subcommands: [
            WorkerCommand.self, MigrateCommand.self, DevicesCommand.self, SimulatorCommand.self, DemoCommand.self,
            ApiCommand.self, PublishCommand.self, ReportCommand.self, KeysCommand.self, JobsCommand.self,
            TopologyCommand.self, BenchCommand.self,
        ]
    )
}

/// Options every command that talks to services shares: flags with `HERALD_*` environment fallbacks.
struct ServiceOptions: ParsableArguments {
    @Option(help: "AMQP URL, amqp://user:pass@host:port/vhost (env HERALD_AMQP_URL).")
    var amqpURL: String?

    @Option(help: "PostgreSQL URL, postgres://user:pass@host:port/db (env HERALD_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error (env HERALD_LOG_LEVEL).")
    var logLevel: String?

    func resolvedAMQPURL() throws -> String {
        try Environment.value(amqpURL, "HERALD_AMQP_URL", what: "--amqp-url")
    }

    func resolvedDatabaseURL() throws -> String {
        try Environment.value(databaseURL, "HERALD_DATABASE_URL", what: "--database-url")
    }

    func makeLogger(label: String) -> Logger {
        LogSetup.bootstrapOnce(level: logLevel ?? Environment.get("HERALD_LOG_LEVEL"))
        return Logger(label: label)
    }
}
