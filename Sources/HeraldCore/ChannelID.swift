/// A Live Activity broadcast channel id as Apple creates it: standard base64 with its padding, of at least one byte
/// and at most ``maximumCharacters`` characters. Checked wherever an id comes from outside (a job's
/// `target.channel`, the channel routes' path) before anything is asked of Apple or PostgreSQL. The schemas' pattern
/// is ``pattern``.
public enum ChannelID {
    /// The longest id accepted (Apple's are about 24 characters).
    public static let maximumCharacters = 200

    /// The same rule as a regular expression (ECMA 262 and Python alike), for the schemas.
    public static let pattern = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"

    /// Whether `text` is such an id.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumCharacters, bytes.count % 4 == 0 else { return false }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy(isBase64Digit)
    }

    private static func isBase64Digit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}
