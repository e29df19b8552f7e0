import Foundation
import HeraldCore

/// Times as the API and the reports write them: RFC 3339 in UTC with milliseconds.
public enum RFC3339Milliseconds {
    /// Formats milliseconds since 1970.
    public static func format(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

/// The `since` and `until` of reports: an RFC 3339 date-time, or a duration before now such as `7d`, `24h`, `30m`,
/// `90s` or `2w` (`^[0-9]+[smhdw]$`). A duration or date before 1970 means 1970 (and a date after 9999 the end of
/// 9999): however many digits it has, it never reaches arithmetic that overflows or a date PostgreSQL or Foundation
/// cannot hold.
public enum TimeWindow {
    /// Milliseconds since 1970 for `text`, or nil if it is neither form.
    public static func milliseconds(_ text: String, now: Date = HeraldClock.system.date) -> Int64? {
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        let digits = text.utf8.dropLast()
        if let unit = text.last, !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // More digits than Int64 holds reach back before 1970 in any unit.
            let amount = Int64(text.dropLast()) ?? Int64.max
            let seconds: Int64? =
                switch unit {
                case "s": 1
                case "m": 60
                case "h": 3600
                case "d": 86_400
                case "w": 7 * 86_400
                default: nil
                }
            if let seconds {
                let (product, overflow) = amount.multipliedReportingOverflow(by: seconds * 1000)
                return overflow ? 0 : max(0, nowMillis - product)
            }
        }
        // Dead tokens are recorded between 1970 and 9999: a date outside means the same as the end it passes, and the
        // answer, which echoes it, stays an RFC 3339 date-time.
        return RFC3339.milliseconds(text).map { min(max($0, 0), 253_402_300_799_999) }
    }
}
