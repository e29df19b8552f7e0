import Foundation

/// A key's value, of the type its kind gives.
package enum ConfigurationValue: Sendable, Hashable, CustomStringConvertible {
    case text(String)
    case integer(Int)
    case fraction(Double)
    case duration(Duration)
    case durations([Duration])
    /// A period key's value (`ConfigurationKey.Kind.period`): nil for `0`, no limit.
    case period(Duration?)

    /// The value as an operator writes it: `10s`, `1s,10s,60s`, `0.5`. Not redacted: see `redacted(for:)`.
    package var description: String {
        switch self {
        case .text(let text): text
        case .integer(let number): String(number)
        case .fraction(let number): String(number)
        case .duration(let duration): Self.render(duration)
        case .durations(let durations): durations.map(Self.render).joined(separator: ",")
        case .period(let duration): duration.map(Self.renderPeriod) ?? "0"
        }
    }

    /// The value as `config show` prints it: a secret URL without its password (`amqp://herald:***@host/`).
    package func redacted(for key: ConfigurationKey) -> String {
        guard key.isSecret, case .text(let text) = self else { return description }
        return Self.redactedURL(text)
    }

    /// A URL with its password (in the user part, or a `password`/`sslpassword` query item) replaced by `***`;
    /// `***` alone for text that is not a URL.
    package static func redactedURL(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.scheme != nil else { return "***" }
        if components.percentEncodedPassword != nil { components.percentEncodedPassword = "***" }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                ["password", "sslpassword"].contains(item.name.lowercased())
                    ? URLQueryItem(name: item.name, value: "***") : item
            }
        }
        return (components.string ?? "***").replacingOccurrences(of: "%2A%2A%2A", with: "***")
    }

    /// `250ms`, `10s`, `5m`, `1h`: the largest unit that renders the duration whole.
    package static func render(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
        let seconds = milliseconds / 1000
        if seconds != 0 && seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds != 0 && seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }

    /// `250ms`, `10s`, `5m`, `1h` (a whole number and its unit); nil for anything else.
    package static func parseDuration(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9, let number = Int64(digits) else { return nil }
        switch trimmed.dropFirst(digits.count) {
        case "ms": return .milliseconds(number)
        case "s": return .seconds(number)
        case "m": return .seconds(number * 60)
        case "h": return .seconds(number * 3600)
        default: return nil
        }
    }

    /// `14d`, `12h`, `5m`, `45s`: the largest unit of a period's that renders it whole (to the second).
    package static func renderPeriod(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        for (unit, scale) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds > 0 && seconds % scale == 0 {
            return "\(seconds / scale)\(unit)"
        }
        return "\(seconds)s"
    }

    /// `90d`, `12h`, `30m`, `45s`: a whole number above 0 and a unit s, m, h or d; nil for anything else (`0`
    /// included, which only a period key's parse reads, as no limit).
    package static func parsePeriod(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 12, let number = Int64(digits), number > 0 else { return nil }
        let scale: Int64
        switch trimmed.dropFirst(digits.count) {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : .seconds(seconds)
    }
}

extension ConfigurationKey {
    /// Reads text (a flag's or a variable's) as a value of this key's type, without checking its range; nil if it
    /// is not of the type.
    func parse(_ text: String) -> ConfigurationValue? {
        switch kind {
        case .text, .path, .url, .choice: return .text(text)
        case .integer: return Int(text.trimmingCharacters(in: .whitespaces)).map(ConfigurationValue.integer)
        case .fraction: return Double(text.trimmingCharacters(in: .whitespaces)).map(ConfigurationValue.fraction)
        case .duration: return ConfigurationValue.parseDuration(text).map(ConfigurationValue.duration)
        case .durations:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let durations = parts.compactMap(ConfigurationValue.parseDuration)
            return durations.count == parts.count ? .durations(durations) : nil
        case .period:
            if text.trimmingCharacters(in: .whitespaces) == "0" { return .period(nil) }
            return ConfigurationValue.parsePeriod(text).map(ConfigurationValue.period)
        }
    }

    /// Whether `value` keeps this key's rule (`Kind.rule`).
    func accepts(_ value: ConfigurationValue) -> Bool {
        switch (kind, value) {
        case (.text, .text(let text)), (.path, .text(let text)):
            return !text.isEmpty
        case (.url(let schemes), .text(let text)):
            guard let scheme = URLComponents(string: text)?.scheme?.lowercased() else { return false }
            return schemes.contains(scheme)
        case (.choice(let words), .text(let text)):
            return words.contains(text)
        case (.integer(let range), .integer(let number)):
            return range.contains(number)
        case (.fraction(let above, let atMost), .fraction(let number)):
            return number > above && number <= atMost
        case (.duration(let range), .duration(let duration)):
            return range.contains(duration)
        case (.durations(let range), .durations(let durations)):
            return !durations.isEmpty && durations.allSatisfy(range.contains)
                && zip(durations, durations.dropFirst()).allSatisfy { $0 < $1 }
        case (.period(_, let forever), .period(nil)):
            return forever
        case (.period(let range, _), .period(let duration?)):
            return range.contains(duration)
        default:
            return false
        }
    }
}
