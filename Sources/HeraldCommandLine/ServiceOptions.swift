import ArgumentParser
import Logging

/// Options every command that talks to services shares: flags with `HERALD_*` environment fallbacks.
package struct ServiceOptions: ParsableArguments {
    package init() {}

    @Option(help: "AMQP URL, amqp://user:pass@host:port/vhost (env HERALD_AMQP_URL).")
    var amqpURL: String?

    @Option(help: "PostgreSQL URL, postgres://user:pass@host:port/db (env HERALD_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error (env HERALD_LOG_LEVEL).")
    var logLevel: String?

    package func resolvedAMQPURL() throws -> String {
        try Environment.value(amqpURL, "HERALD_AMQP_URL", what: "--amqp-url")
    }

    package func resolvedDatabaseURL() throws -> String {
        try Environment.value(databaseURL, "HERALD_DATABASE_URL", what: "--database-url")
    }

    package func makeLogger(label: String) -> Logger {
        LogSetup.bootstrapOnce(level: logLevel ?? Environment.get("HERALD_LOG_LEVEL"))
        return Logger(label: label)
    }
}
