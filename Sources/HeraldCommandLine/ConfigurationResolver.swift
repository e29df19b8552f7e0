import Configuration
import Foundation
import Synchronization

/// Resolves keys with swift-configuration's `ConfigReader` over four providers, the first that has a key winning:
/// the command line's flags, the `HERALD_*` environment variables, the configuration file, then the defaults.
/// Every value is checked against its key's rule; every problem becomes one sentence.
package struct ConfigurationResolver: Sendable {
    /// The flags given on the command line, as typed, by key.
    package var flags: [ConfigurationKey: String]
    /// The process environment.
    package var environment: [String: String]
    /// The configuration file's path, if one is given, and where the path came from.
    package var file: (path: String, origin: String)?

    package init(
        flags: [ConfigurationKey: String] = [:], environment: [String: String], file: (path: String, origin: String)?
    ) {
        self.flags = flags
        self.environment = environment
        self.file = file
    }

    /// Resolves `keys`; a key in `required` must end up with a value. Throws every problem at once.
    package func resolve(
        _ keys: [ConfigurationKey], required: Set<ConfigurationKey> = []
    ) throws(ConfigurationProblems) -> ResolvedConfiguration {
        var problems: [String] = []
        let configurationFile: ConfigurationFile?
        if let file {
            configurationFile = try ConfigurationFile(path: file.path, origin: file.origin)
        } else {
            configurationFile = nil
        }

        // Flags arrive as text; they become values of their key's type here, so the in-memory provider holds
        // what the reader asks for.
        var flagValues: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, text) in flags {
            guard let value = key.parse(text) else {
                problems.append(Self.sentence(key, shown: text, from: .flag(key.option)))
                continue
            }
            flagValues[AbsoluteConfigKey(ConfigKey(key.name))] = ConfigValue(value.content, isSecret: key.isSecret)
        }
        var defaults: [AbsoluteConfigKey: ConfigValue] = [:]
        for key in keys {
            if let value = key.defaultValue {
                defaults[AbsoluteConfigKey(ConfigKey(key.name))] = ConfigValue(value.content, isSecret: key.isSecret)
            }
        }
        // Each key's own variable: today's names (HERALD_AMQP_URL, HERALD_API_PORT, …) are not all the dotted
        // name in capitals, so the registry maps them.
        let variables = Dictionary(uniqueKeysWithValues: ConfigurationKey.all.map { ($0.name, $0.environment) })
        let environmentProvider = KeyMappingProvider(
            upstream: EnvironmentVariablesProvider(
                environmentVariables: environment.filter { !$0.value.isEmpty },
                secretsSpecifier: .specific(Set(ConfigurationKey.all.filter(\.isSecret).map(\.environment))))
        ) { key in
            AbsoluteConfigKey([variables[key.description] ?? key.description])
        }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flagValues), environmentProvider,
        ]
        if let configurationFile { providers.append(configurationFile.provider) }
        providers.append(InMemoryProvider(name: "defaults", values: defaults))
        let recorder = LookupRecorder()
        let reader = ConfigReader(providers: providers, accessReporter: recorder)

        var entries: [ResolvedConfiguration.Entry] = []
        for key in keys {
            let value = Self.read(key, from: reader)
            let event = recorder.take()
            let results = event?.providerResults ?? []
            let index = results.count - 1
            func source(_ index: Int) -> ConfigurationSource {
                switch index {
                case 0: .flag(key.option)
                case 1: .environment(key.environment)
                case 2 where configurationFile != nil: .file(configurationFile!.path)
                default: .defaultValue
                }
            }
            if index >= 0, case .failure = results[index].result {
                // A value of the wrong type: a variable that is not a number, a file's string for an integer.
                let from = source(index)
                if case .period = key.kind, case .file = from, let text = configurationFile?.leaves[key.name],
                    let number = key.parse(text)
                {
                    // A period written as a JSON number in the file: `0` (keep for ever) is one.
                    if !key.accepts(number) { problems.append(Self.sentence(key, shown: text, from: from)) }
                    entries.append(.init(key: key, value: number, source: from))
                    continue
                }
                let shown: String? =
                    switch from {
                    case .environment(let name): environment[name]
                    case .file: configurationFile?.leaves[key.name]
                    default: nil
                    }
                problems.append(Self.sentence(key, shown: shown, from: from, mismatch: true))
                entries.append(.init(key: key, value: nil, source: from))
                continue
            }
            guard let value else {
                if required.contains(key) {
                    problems.append(
                        "\(key.name) is not set: give \(key.option), set \(key.environment), or set \(key.name) in "
                            + "the configuration file")
                }
                entries.append(.init(key: key, value: nil, source: .unset))
                continue
            }
            let from = source(index)
            if !key.accepts(value) {
                problems.append(Self.sentence(key, shown: value.redacted(for: key), from: from))
            }
            entries.append(.init(key: key, value: value, source: from))
        }
        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        return ResolvedConfiguration(entries: entries, file: configurationFile?.path)
    }

    /// Reads `key` as its kind's type; nil when no provider has it or the one that has it holds another type.
    private static func read(_ key: ConfigurationKey, from reader: ConfigReader) -> ConfigurationValue? {
        let name = ConfigKey(key.name)
        switch key.kind {
        case .text, .path, .url, .choice:
            return reader.string(forKey: name, isSecret: key.isSecret).map(ConfigurationValue.text)
        case .integer:
            return reader.int(forKey: name).map(ConfigurationValue.integer)
        case .fraction:
            return reader.double(forKey: name).map(ConfigurationValue.fraction)
        case .duration:
            guard let text = reader.string(forKey: name) else { return nil }
            return ConfigurationValue.parseDuration(text).map(ConfigurationValue.duration) ?? .text(text)
        case .durations:
            guard let texts = reader.stringArray(forKey: name) else { return nil }
            let durations = texts.compactMap(ConfigurationValue.parseDuration)
            return durations.count == texts.count ? .durations(durations) : .text(texts.joined(separator: ","))
        case .period:
            guard let text = reader.string(forKey: name) else { return nil }
            return key.parse(text) ?? .text(text)
        }
    }

    /// `worker.prefetch = 0 (from HERALD_WORKER_PREFETCH) must be a whole number from 1 to 65535`; a secret's
    /// value is shown only redacted.
    static func sentence(
        _ key: ConfigurationKey, shown: String?, from source: ConfigurationSource, mismatch: Bool = false
    ) -> String {
        let value = shown.map { key.isSecret ? ConfigurationValue.redactedURL($0) : $0 }
        var rule = key.kind.rule
        if mismatch, key.kind == .text || key.kind == .path { rule = "must be a string" }
        return "\(key.name)\(value.map { " = \($0)" } ?? "") (from \(source)) \(rule)"
    }
}

extension ConfigurationValue {
    /// The value as swift-configuration holds it (durations as text, as a file or variable writes them).
    var content: ConfigContent {
        switch self {
        case .text(let text): .string(text)
        case .integer(let number): .int(number)
        case .fraction(let number): .double(number)
        case .duration(let duration): .string(Self.render(duration))
        case .durations(let durations): .stringArray(durations.map(Self.render))
        case .period: .string(description)
        }
    }
}

/// Keeps the access event of the last lookup: which provider answered, or which one failed.
private final class LookupRecorder: AccessReporter {
    private let last = Mutex<AccessEvent?>(nil)

    func report(_ event: AccessEvent) { last.withLock { $0 = event } }

    func take() -> AccessEvent? {
        last.withLock { event in
            defer { event = nil }
            return event
        }
    }
}
