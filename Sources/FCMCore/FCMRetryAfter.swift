/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date in any of its three forms
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`).
public enum FCMRetryAfter {
    /// The longest wait accepted: a day. Anything longer is not taken from a remote party.
    public static let maximumSeconds: Int64 = 86_400

    /// The wait in seconds, or nil for a value that is garbage or longer than `maximumSeconds`. A date is taken
    /// relative to `now` (seconds since 1970); a date already past means no wait (0).
    public static func seconds(_ value: String, now: Int64) -> Int64? {
        guard value.utf8.count <= 64 else { return nil }
        let text = value.trimmingSpaces
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy(isDigit) {
            guard text.utf8.count <= 10, let seconds = Int64(text), seconds <= maximumSeconds else { return nil }
            return seconds
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        let wait = max(0, date - now)
        return wait <= maximumSeconds ? wait : nil
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmingSpaces: Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
