import ArgumentParser
import HeraldCommandLine

/// `herald config …`: the effective configuration and its documentation, from the one registry of keys.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective configuration, or print its documentation.",
        subcommands: [ConfigShowCommand.self, ConfigDocsCommand.self]
    )
}

/// `herald config show [--json]`: every key, its effective value (secrets redacted) and where it came from.
struct ConfigShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print every key with its effective value and its source (flag, env, file, default).",
        discussion: "Takes every command's flags, so that a command line can be checked before it is run."
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var queues: QueueOptions
    @OptionGroup var apps: AppsFileOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var retention: RetentionOptions
    @OptionGroup var webhooks: WebhookOptions
    @OptionGroup var api: APIOptions
    @OptionGroup var migration: MigrationOptions

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        let resolved = try services.resolve(
            ConfigurationKey.all, with: [queues, apps, worker, retention, webhooks, api, migration])
        print(json ? ConfigurationReport.json(resolved) : ConfigurationReport.table(resolved), terminator: "")
    }
}

/// `herald config docs`: the Markdown of docs/configuration.md.
struct ConfigDocsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docs",
        abstract: "Print docs/configuration.md: every key with its variable, flag, type, default and meaning."
    )

    func run() {
        print(ConfigurationReport.documentation(), terminator: "")
    }
}
