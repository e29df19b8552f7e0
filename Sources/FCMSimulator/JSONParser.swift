/// A strict JSON parser (RFC 8259) over bytes already bounded by the request size, with a nesting limit so that a
/// hostile body cannot exhaust the stack. Produces ``JSONValue`` with object members in the order sent.
struct JSONParser {
    /// Why the bytes are not JSON; `offset` is where parsing stopped.
    struct Failure: Error, Hashable {
        var offset: Int
    }

    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 32

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Parses one JSON text, with only whitespace around it.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Failure(offset: parser.index) }
        return value
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var failure: Failure { Failure(offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw failure }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default: return .number(try number())
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure
        }
        index += expected.count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure }
        index += 1
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [JSONValue.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure }
            index += 1
            members.append(JSONValue.Member(key: key, value: try value()))
            skipWhitespace()
            guard index < bytes.count else { throw failure }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw failure
            }
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var values: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            values.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw failure }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            } else {
                throw failure
            }
        }
    }

    private mutating func number() throws(Failure) -> String {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1  // a leading zero stands alone
        } else {
            guard digits() > 0 else { throw failure }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw failure }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    private mutating func string() throws(Failure) -> String {
        index += 1  // the opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ end: Int) throws(Failure) {
            guard let text = String(validating: bytes[runStart..<end], as: UTF8.self) else { throw failure }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flush(index)
                index += 1
                return String(scalars)
            }
            guard byte >= 0x20 else { throw failure }
            if byte == UInt8(ascii: "\\") {
                try flush(index)
                scalars.append(try escape())
                runStart = index
            } else {
                index += 1
            }
        }
        throw failure
    }

    private mutating func escape() throws(Failure) -> Unicode.Scalar {
        index += 1  // the backslash
        guard index < bytes.count else { throw failure }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hex4()
            guard (0xD800...0xDBFF).contains(high) else {
                guard !(0xDC00...0xDFFF).contains(high), let scalar = Unicode.Scalar(high) else { throw failure }
                return scalar
            }
            try literal("\\u")
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            else { throw failure }
            return scalar
        default:
            throw failure
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4, bytes[index..<index + 4].allSatisfy({ $0 < 0x80 && isHexDigit($0) }),
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw failure }
        index += 4
        return value
    }

    private func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
