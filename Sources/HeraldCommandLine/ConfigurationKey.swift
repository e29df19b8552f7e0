/// One setting of Herald: its dotted name (the configuration file's key), its `HERALD_*` environment variable, its
/// flag, what values it takes, its default and what it means. Every key is declared once, in
/// `ConfigurationKey+Registry.swift`; the commands, `herald config show` and `docs/configuration.md` read it there.
package struct ConfigurationKey: Sendable, Hashable, CustomStringConvertible {
    /// The values a key takes, and how a value given as text is read.
    package enum Kind: Sendable, Hashable {
        /// Any text that is not empty.
        case text
        /// A file system path.
        case path
        /// A URL with one of these schemes; its password is redacted wherever it is shown.
        case url(schemes: [String])
        /// One of these words.
        case choice([String])
        /// A whole number in the range.
        case integer(ClosedRange<Int>)
        /// A number above `above` and at most `atMost`.
        case fraction(above: Double, atMost: Double)
        /// A duration such as `250ms`, `10s`, `5m` or `1h`, in the range.
        case duration(ClosedRange<Duration>)
        /// A comma-separated list of durations (a JSON array of them in the file), each in the range, at least
        /// one, strictly increasing.
        case durations(ClosedRange<Duration>)
        /// A long duration, a whole number of seconds, minutes, hours or days (`90d`, `12h`, `30m`), in the range;
        /// with `forever`, `0` too, meaning no limit (a retention age that keeps everything).
        case period(ClosedRange<Duration>, forever: Bool)
    }

    /// The dotted name, e.g. `worker.prefetch`: the configuration file's key (nested objects or the dotted string).
    package let name: String
    /// The environment variable, e.g. `HERALD_WORKER_PREFETCH`.
    package let environment: String
    /// The long flag without its dashes, e.g. `prefetch`.
    package let flag: String
    /// What values the key takes.
    package let kind: Kind
    /// The value when nothing sets the key; nil for a key that has none (required where it is used, or off).
    package let defaultValue: ConfigurationValue?
    /// Whether the value holds a secret (a URL's password): shown redacted.
    package let isSecret: Bool
    /// One line on what the key means.
    package let summary: String

    package init(
        _ name: String, environment: String, flag: String, kind: Kind, default defaultValue: ConfigurationValue?,
        secret isSecret: Bool = false, _ summary: String
    ) {
        self.name = name
        self.environment = environment
        self.flag = flag
        self.kind = kind
        self.defaultValue = defaultValue
        self.isSecret = isSecret
        self.summary = summary
    }

    package var description: String { name }

    /// `--flag`.
    package var option: String { "--" + flag }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }

    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension ConfigurationKey.Kind {
    /// The type as the documentation and `config show` name it.
    package var typeName: String {
        switch self {
        case .text: "string"
        case .path: "path"
        case .url(let schemes): "URL (" + schemes.joined(separator: ", ") + ")"
        case .choice(let words): "one of " + words.joined(separator: ", ")
        case .integer(let range): "integer, \(range.lowerBound) to \(range.upperBound)"
        case .fraction(let above, let atMost): "number above \(above.formatted) and at most \(atMost.formatted)"
        case .duration(let range):
            "duration, \(ConfigurationValue.render(range.lowerBound)) to \(ConfigurationValue.render(range.upperBound))"
        case .durations(let range):
            "durations, increasing, each \(ConfigurationValue.render(range.lowerBound)) to "
                + ConfigurationValue.render(range.upperBound)
        case .period(let range, let forever):
            "duration (s, m, h, d), \(ConfigurationValue.renderPeriod(range.lowerBound)) to "
                + ConfigurationValue.renderPeriod(range.upperBound) + (forever ? ", or 0 for ever" : "")
        }
    }

    /// The rule a value breaks, as the end of a sentence: `must be 1 to 65535`.
    var rule: String {
        switch self {
        case .text, .path: "must not be empty"
        case .url(let schemes): "must be a URL starting with " + schemes.map { $0 + "://" }.joined(separator: " or ")
        case .choice(let words): "must be " + words.joinedAsAlternatives
        case .integer(let range): "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .fraction(let above, let atMost):
            "must be a number above \(above.formatted) and at most \(atMost.formatted)"
        case .duration(let range):
            "must be a duration (250ms, 10s, 5m, 1h) from \(ConfigurationValue.render(range.lowerBound)) to "
                + ConfigurationValue.render(range.upperBound)
        case .durations(let range):
            "must be a comma-separated list of increasing durations (250ms, 10s, 5m, 1h), each from "
                + "\(ConfigurationValue.render(range.lowerBound)) to \(ConfigurationValue.render(range.upperBound))"
        case .period(let range, let forever):
            (forever ? "must be 0 (keep for ever) or " : "must be ")
                + "a whole number with a unit s, m, h or d (90d, 12h, 30m) from "
                + "\(ConfigurationValue.renderPeriod(range.lowerBound)) to "
                + ConfigurationValue.renderPeriod(range.upperBound)
        }
    }
}

extension Double {
    var formatted: String { self == rounded() ? String(Int(self)) : String(self) }
}

extension [String] {
    /// `a`, `a or b`, `a, b or c`.
    var joinedAsAlternatives: String {
        count <= 1 ? joined() : dropLast().joined(separator: ", ") + " or " + last!
    }
}
