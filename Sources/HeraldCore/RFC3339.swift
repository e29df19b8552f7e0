import Foundation

/// RFC 3339 date-times (`2026-11-21T12:00:00Z`, with or without fractional seconds and with offsets).
public enum RFC3339 {
    /// Milliseconds since 1970, or nil if `text` is not an RFC 3339 date-time.
    public static func milliseconds(_ text: String) -> Int64? {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: text) ?? fractional.date(from: text) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Formats milliseconds since 1970 as UTC.
    public static func format(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
