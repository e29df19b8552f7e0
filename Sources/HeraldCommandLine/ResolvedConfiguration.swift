/// The effective configuration of the keys a command resolved: each key's value and where it came from.
package struct ResolvedConfiguration: Sendable {
    /// One key's effective value (nil: not set, and no default) and its source.
    package struct Entry: Sendable, Hashable {
        package var key: ConfigurationKey
        package var value: ConfigurationValue?
        package var source: ConfigurationSource
    }

    /// The keys in the order they were resolved.
    package let entries: [Entry]
    /// The configuration file read, if any.
    package let file: String?

    package init(entries: [Entry], file: String?) {
        self.entries = entries
        self.file = file
    }

    /// The entry of `key`; resolving a configuration without a key and then reading it is a programming error.
    package func entry(_ key: ConfigurationKey) -> Entry {
        guard let entry = entries.first(where: { $0.key == key }) else {
            preconditionFailure("\(key.name) was not resolved")
        }
        return entry
    }

    /// The value of `key`, if it has one.
    package func value(_ key: ConfigurationKey) -> ConfigurationValue? { entry(key).value }

    /// Where the value of `key` came from.
    package func source(of key: ConfigurationKey) -> ConfigurationSource { entry(key).source }

    /// The text of a text, path, URL or choice key, if set.
    package func text(_ key: ConfigurationKey) -> String? {
        switch value(key) {
        case .text(let text): return text
        case nil: return nil
        case let other?: preconditionFailure("\(key.name) holds \(other), not text")
        }
    }

    /// The text of a key that is set (required, or with a default).
    package func requiredText(_ key: ConfigurationKey) -> String {
        guard let text = text(key) else { preconditionFailure("\(key.name) has no value") }
        return text
    }

    /// The number of an integer key (which always has a default).
    package func integer(_ key: ConfigurationKey) -> Int {
        guard case .integer(let number) = value(key) else { preconditionFailure("\(key.name) is not an integer") }
        return number
    }

    /// The number of a fraction key.
    package func fraction(_ key: ConfigurationKey) -> Double {
        guard case .fraction(let number) = value(key) else { preconditionFailure("\(key.name) is not a fraction") }
        return number
    }

    /// The duration of a duration key.
    package func duration(_ key: ConfigurationKey) -> Duration {
        guard case .duration(let duration) = value(key) else { preconditionFailure("\(key.name) is not a duration") }
        return duration
    }

    /// The durations of a durations key.
    package func durations(_ key: ConfigurationKey) -> [Duration] {
        guard case .durations(let durations) = value(key) else {
            preconditionFailure("\(key.name) is not a list of durations")
        }
        return durations
    }

    /// The duration of a period key; nil for `0`, no limit (only a key whose kind allows it, `forever`, has it).
    package func period(_ key: ConfigurationKey) -> Duration? {
        guard case .period(let duration) = value(key) else { preconditionFailure("\(key.name) is not a period") }
        return duration
    }

    /// The duration of a period key whose kind does not allow `0`.
    package func requiredPeriod(_ key: ConfigurationKey) -> Duration {
        guard let duration = period(key) else { preconditionFailure("\(key.name) has no limit") }
        return duration
    }
}
