import ArgumentParser
import Foundation
import Logging

/// A group of flags that set configuration keys (`ConfigurationKey`): each flag is the key's, and a flag given wins
/// over the key's environment variable, the configuration file and the default.
package protocol ConfigurationOptions: ParsableArguments {
    /// Each key these options declare, with the text given on the command line (nil: not given).
    var givenFlags: [(key: ConfigurationKey, text: String?)] { get }
}

extension ArgumentHelp {
    /// A key's help: its meaning, variable and default, from the registry.
    package init(_ key: ConfigurationKey) {
        let fallback = key.defaultValue.map { "; default \($0)" } ?? ""
        self.init("\(key.summary) (\(key.name), env \(key.environment)\(fallback))")
    }
}

/// Options every command that talks to services shares: the configuration file, the broker and database URLs
/// and the log level. Their values, and those of the command's other option groups, resolve through
/// `ConfigurationResolver`: flag, then `HERALD_*` variable, then the configuration file, then the default.
package struct ServiceOptions: ConfigurationOptions {
    package init() {}

    @Option(help: "A JSON configuration file of Herald's keys (env HERALD_CONFIG_FILE); see herald config docs.")
    var config: String?

    @Option(help: ArgumentHelp(.amqpURL))
    var amqpURL: String?

    @Option(help: ArgumentHelp(.databaseURL))
    var databaseURL: String?

    @Option(help: ArgumentHelp(.logLevel))
    var logLevel: String?

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        [(.amqpURL, amqpURL), (.databaseURL, databaseURL), (.logLevel, logLevel)]
    }

    /// The resolver over these flags and `groups`' flags, the process environment and the configuration file.
    package func resolver(
        with groups: [any ConfigurationOptions] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ConfigurationResolver {
        Self.resolver(with: [self] + groups, config: config, environment: environment)
    }

    /// The resolver over `groups`' flags, the environment and the configuration file (`config`, else
    /// `HERALD_CONFIG_FILE`), for a command without the service options.
    package static func resolver(
        with groups: [any ConfigurationOptions], config: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ConfigurationResolver {
        var flags: [ConfigurationKey: String] = [:]
        for group in groups {
            for (key, text) in group.givenFlags { if let text { flags[key] = text } }
        }
        var file: (String, String)? = nil
        if let config, !config.isEmpty {
            file = (config, "--config")
        } else if let path = environment[ConfigurationKey.configFileEnvironment], !path.isEmpty {
            file = (path, ConfigurationKey.configFileEnvironment)
        }
        return ConfigurationResolver(flags: flags, environment: environment, file: file)
    }

    /// Resolves `keys` (the log level always among them) with `groups`' flags; `required` keys must have a value.
    package func resolve(
        _ keys: [ConfigurationKey], required: Set<ConfigurationKey> = [], with groups: [any ConfigurationOptions] = []
    ) throws(ConfigurationProblems) -> ResolvedConfiguration {
        let all = keys.contains(.logLevel) ? keys : [.logLevel] + keys
        return try resolver(with: groups).resolve(all, required: required)
    }

    /// The broker's URL: flag, variable or file; an error sentence if none sets it.
    package func resolvedAMQPURL() throws -> String {
        try resolve([.amqpURL], required: [.amqpURL]).requiredText(.amqpURL)
    }

    /// The database's URL: flag, variable or file; an error sentence if none sets it.
    package func resolvedDatabaseURL() throws -> String {
        try resolve([.databaseURL], required: [.databaseURL]).requiredText(.databaseURL)
    }

    /// Bootstraps logging at the resolved level and returns a logger. A level that breaks its rule logs at info
    /// here; the command's own `resolve` reports it.
    package func makeLogger(label: String) -> Logger {
        LogSetup.bootstrapOnce(level: (try? resolve([.logLevel]))?.text(.logLevel))
        return Logger(label: label)
    }

    /// Bootstraps logging at `configuration`'s level and returns a logger.
    package static func makeLogger(label: String, configuration: ResolvedConfiguration) -> Logger {
        LogSetup.bootstrapOnce(level: configuration.text(.logLevel))
        return Logger(label: label)
    }
}

/// The queue keys, which every worker and API of a deployment must share.
package struct QueueOptions: ConfigurationOptions {
    package init() {}

    @OptionGroup var prefix: QueuePrefixOptions

    @Option(help: ArgumentHelp(.queueType))
    var queueType: String?

    @Option(help: ArgumentHelp(.retryDelays))
    var retryDelays: String?

    package static let keys: [ConfigurationKey] = QueuePrefixOptions.keys + [.queueType, .retryDelays]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        prefix.givenFlags + [(.queueType, queueType), (.retryDelays, retryDelays)]
    }
}

/// The queue prefix alone, for a command that only names queues (`herald parked`) and neither declares them nor
/// moves work between the retry queues.
package struct QueuePrefixOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.queuePrefix))
    var queuePrefix: String?

    package static let keys: [ConfigurationKey] = [.queuePrefix]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] { [(.queuePrefix, queuePrefix)] }
}

/// The apps file's key.
package struct AppsFileOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.appsFile))
    var appsFile: String?

    package var givenFlags: [(key: ConfigurationKey, text: String?)] { [(.appsFile, appsFile)] }
}
