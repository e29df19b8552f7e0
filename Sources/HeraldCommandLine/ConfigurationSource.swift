/// Where a key's effective value came from.
package enum ConfigurationSource: Sendable, Hashable, CustomStringConvertible {
    /// A flag on the command line, e.g. `--prefetch`.
    case flag(String)
    /// An environment variable, e.g. `HERALD_WORKER_PREFETCH`.
    case environment(String)
    /// The configuration file at this path.
    case file(String)
    /// The key's default (`ConfigurationKey.defaultValue`).
    case defaultValue
    /// Nothing set it and it has no default.
    case unset

    /// `flag`, `env`, `file`, `default` or `unset`: the column `herald config show` prints.
    package var kind: String {
        switch self {
        case .flag: "flag"
        case .environment: "env"
        case .file: "file"
        case .defaultValue: "default"
        case .unset: "unset"
        }
    }

    /// How a sentence names it: `--prefetch`, `HERALD_WORKER_PREFETCH`, `the configuration file /etc/herald.json`.
    package var description: String {
        switch self {
        case .flag(let flag): flag
        case .environment(let name): name
        case .file(let path): "the configuration file \(path)"
        case .defaultValue: "the default"
        case .unset: "nothing"
        }
    }
}

/// What is wrong with the configuration: one sentence per problem, each naming the key, where its value came from
/// and the rule it breaks (`worker.prefetch = 0 (from HERALD_WORKER_PREFETCH) must be a whole number from 1 to
/// 65535`). Never a secret's value.
package struct ConfigurationProblems: Error, Sendable, Hashable, CustomStringConvertible {
    package var sentences: [String]

    package init(_ sentences: [String]) { self.sentences = sentences }

    package var description: String { sentences.joined(separator: "\n") }
}
