/// A JSON value as FCMCore reads and writes it: numbers keep their text, so a custom-data value such as `1.50` or
/// `12345678901234567890` reaches the device exactly as the job wrote it, and objects keep no order (they are
/// written with sorted keys, so the same value always gives the same bytes).
///
/// Foundation's `JSONSerialization` is not used because it hands back `Any` (on Linux a `1` and a `true` are both
/// `NSNumber` and can swap on the way out) and reformats numbers.
enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text as it appeared (already checked against the JSON grammar).
    case number(String)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    /// The string, if this is one.
    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The object's members, if this is one.
    var object: [String: JSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The value as a whole number, if it is an integer written without fraction or exponent that fits an `Int64`.
    var int64: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    /// The compact text of the value: no whitespace, object keys sorted by their UTF-8 bytes.
    var compactText: String {
        var out: [UInt8] = []
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact text of the value to `out`.
    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): JSON.writeString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            JSON.writeMembers(members, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `"key":value` pairs, sorted by key and separated by commas, without the braces.
    static func writeMembers(_ members: [String: JSON], to out: inout [UInt8]) {
        for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            writeString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            members[key]!.write(to: &out)
        }
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped, the rest as
    /// UTF-8.
    static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: their bytes are copied in one go.
        var text = text
        let copied = text.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
