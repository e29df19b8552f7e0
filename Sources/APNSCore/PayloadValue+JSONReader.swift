import Foundation

/// A recursive-descent reader over a byte buffer.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ message: String) -> PayloadValue.JSONError { PayloadValue.JSONError(message, offset: index) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func readValue() throws(PayloadValue.JSONError) -> PayloadValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(PayloadValue.JSONError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count,
            memcmp(bytes.baseAddress! + index, literal.utf8Start, count) == 0
        else { throw error("invalid literal") }
        index += count
    }

    private mutating func enter() throws(PayloadValue.JSONError) {
        depth += 1
        guard depth <= PayloadValue.maximumJSONDepth else { throw error("nested too deeply") }
        index += 1
    }

    private mutating func readObject() throws(PayloadValue.JSONError) -> PayloadValue {
        try enter()
        defer { depth -= 1 }
        // Room for a typical object's members from the start: growing from empty rehashes every key each time.
        var members = [String: PayloadValue](minimumCapacity: 8)
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try readString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            members[key] = try readValue()
            if try endOfItem(closing: UInt8(ascii: "}")) { return .object(members) }
        }
    }

    private mutating func readArray() throws(PayloadValue.JSONError) -> PayloadValue {
        try enter()
        defer { depth -= 1 }
        var values: [PayloadValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            values.append(try readValue())
            if try endOfItem(closing: UInt8(ascii: "]")) { return .array(values) }
        }
    }

    /// After an object member or array element: consumes ',' (false: another follows) or `close` (true: the
    /// container ends).
    private mutating func endOfItem(closing close: UInt8) throws(PayloadValue.JSONError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: ","):
            index += 1
            return false
        case close:
            index += 1
            return true
        default:
            throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// The bytes as a string if they are well-formed UTF-8, else nil. Decoded on the standard library's fast path,
    /// which repairs ill-formed input, and compared with the input: a repair changes the bytes. About twice as fast
    /// as `String(validating:as:)`, which every string of every job went through.
    static func validUTF8(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        var string = String(decoding: raw, as: UTF8.self)
        let unchanged = string.withUTF8 { decoded in
            decoded.count == raw.count
                && (raw.isEmpty || memcmp(decoded.baseAddress!, raw.baseAddress!, raw.count) == 0)
        }
        return unchanged ? string : nil
    }

    /// Reads a string; `index` is at its opening quote.
    private mutating func readString() throws(PayloadValue.JSONError) -> String {
        index += 1
        let start = index
        // The common case: no escapes, so the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard let string = Self.validUTF8(raw) else {
                    throw error("invalid UTF-8 in a string")
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("a control character in a string must be escaped") }
            index += 1
        }
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = decoded.withUnsafeBufferPointer(Self.validUTF8) else {
                    throw error("invalid UTF-8 in a string")
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw error("an unpaired surrogate in a string")
                        }
                        index += 2
                        let low = try readHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("an unpaired surrogate in a string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("an unpaired surrogate in a string")
                    }
                    decoded.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    index -= 1
                    throw error("an invalid escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw error("a control character in a string must be escaped") }
                decoded.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func readHex4() throws(PayloadValue.JSONError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("an invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("an invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Reads a number by RFC 8259's grammar: an integer if it has no fraction or exponent and fits in Int64.
    private mutating func readNumber() throws(PayloadValue.JSONError) -> PayloadValue {
        let start = index
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        var integer: Int64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && isDigit(bytes[index]) { throw error("a number has a leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let digit = Int64(bytes[index] - UInt8(ascii: "0"))
                let (times, o1) = integer.multipliedReportingOverflow(by: 10)
                let (next, o2) =
                    negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                overflow = overflow || o1 || o2
                integer = next
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger && !overflow { return .integer(integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        // PostgreSQL's numeric (jsonb) and Double agree on what is finite; a number that rounds to zero though it
        // has a non-zero digit (1e-400) underflowed, and numeric refuses the most extreme of those: refused here.
        guard let value = Double(text), value.isFinite,
            value != 0 || !Self.hasNonZeroMantissa(bytes[start..<index])
        else {
            index = start
            throw error("a number is out of range")
        }
        // 2.0 and 1e3 are integers too, as Foundation's decoder reads them (exactly, below 2^53).
        if value == value.rounded(.towardZero) && abs(value) < 9_007_199_254_740_992 { return .integer(Int64(value)) }
        return .number(value)
    }

    /// Whether a number's digits before its exponent include one that is not zero.
    private static func hasNonZeroMantissa(_ number: some Sequence<UInt8>) -> Bool {
        for byte in number {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
            if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return true }
        }
        return false
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
