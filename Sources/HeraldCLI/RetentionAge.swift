import ArgumentParser
import HeraldCommandLine

/// A duration given on the command line or in the environment: a whole number and a unit, `s`, `m`, `h` or `d`
/// (`90d`, `12h`, `30m`), bounded; for retention ages `0` means keep for ever.
enum RetentionAge {
    /// The longest age accepted: ten years.
    static let maximumSeconds: Int64 = 3650 * 86_400

    /// Parses `text` (the flag's value, else `variable`'s, else `fallback`) into seconds within `range`; names the
    /// flag and the variable in the error.
    static func seconds(
        _ text: String?, _ variable: String, flag: String, fallback: String, range: ClosedRange<Int64>
    ) throws -> Int64 {
        let given = text ?? Environment.get(variable) ?? fallback
        guard let seconds = parse(given), range.contains(seconds) else {
            throw ValidationError(
                "\(flag) (env \(variable)) must be 0 or a whole number with a unit s, m, h or d (such as 14d) "
                    + "from \(describe(max(range.lowerBound, 1))) to \(describe(range.upperBound)); got \(given.prefix(40))")
        }
        return seconds
    }

    /// A retention age: nil for `0` (keep for ever), else at least a minute.
    static func age(
        _ text: String?, _ variable: String, flag: String, fallback: String
    ) throws -> Duration? {
        let seconds = try seconds(text, variable, flag: flag, fallback: fallback, range: 0...maximumSeconds)
        guard seconds != 0 else { return nil }
        guard seconds >= 60 else { throw ValidationError("\(flag) (env \(variable)) must be 0 or at least 1m") }
        return .seconds(seconds)
    }

    /// Seconds for `90d`, `12h`, `30m`, `45s` or `0`; nil for anything else.
    static func parse(_ text: String) -> Int64? {
        if text == "0" { return 0 }
        guard text.count <= 12, let unit = text.last, let number = Int64(text.dropLast()), number > 0 else {
            return nil
        }
        let scale: Int64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : seconds
    }

    /// `seconds` in the largest whole unit: `14d`, `5m`.
    static func describe(_ seconds: Int64) -> String {
        for (unit, scale) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % scale == 0 && seconds > 0 {
            return "\(seconds / scale)\(unit)"
        }
        return "\(seconds)s"
    }
}
