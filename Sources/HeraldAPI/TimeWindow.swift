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
/// `90s` or `2w`.
public enum TimeWindow {
    /// Milliseconds since 1970 for `text`, or nil if it is neither form.
    public static func milliseconds(_ text: String, now: Date = Date()) -> Int64? {
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        if let unit = text.last, let amount = Int64(text.dropLast()), amount >= 0 {
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
                return overflow ? nil : nowMillis - product
            }
        }
        return RFC3339.milliseconds(text)
    }
}
