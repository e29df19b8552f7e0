/// Writes JSON text straight into bytes: the few shapes Web Push needs (an object of strings, numbers, booleans and
/// caller-supplied JSON), without a JSON tree or Foundation.
package struct JSONWriter {
    /// The text written so far.
    package private(set) var bytes: [UInt8]
    private var needsComma = [false]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Opens an object: at the top level, or as the value of `key`.
    package mutating func beginObject(_ key: String? = nil) {
        if let key { writeKey(key) } else { separate() }
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    /// Closes the innermost object.
    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    /// `"key":"value"` with the value escaped; nothing when `value` is nil.
    package mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        writeKey(key)
        Self.appendQuoted(value, to: &bytes)
    }

    /// `"key":n`; nothing when `value` is nil.
    package mutating func integer(_ key: String, _ value: Int?) {
        guard let value else { return }
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `"key":true|false`; nothing when `value` is nil.
    package mutating func boolean(_ key: String, _ value: Bool?) {
        guard let value else { return }
        writeKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `"key":<json>` with `json` copied as it is (the caller vouches that it is one JSON value); nothing when nil or
    /// empty.
    package mutating func raw(_ key: String, _ json: [UInt8]?) {
        guard let json, !json.isEmpty else { return }
        writeKey(key)
        bytes.append(contentsOf: json)
    }

    private mutating func writeKey(_ key: String) {
        separate()
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    /// Appends `text` as a JSON string (RFC 8259 section 7): quotes, backslash and the control characters below
    /// U+0020 escaped, everything else as UTF-8 (U+2028 and U+2029 are valid JSON as they are).
    package static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            let escape: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape = byte
            case 0x0A: escape = UInt8(ascii: "n")
            case 0x0D: escape = UInt8(ascii: "r")
            case 0x09: escape = UInt8(ascii: "t")
            case 0x08: escape = UInt8(ascii: "b")
            case 0x0C: escape = UInt8(ascii: "f")
            case 0x00..<0x20:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
                continue
            default:
                bytes.append(byte)
                continue
            }
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(escape)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `text` as a quoted JSON string.
    package static func quoted(_ text: String) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
