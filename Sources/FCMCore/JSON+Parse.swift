/// A strict RFC 8259 reader: one value, optional surrounding whitespace, valid UTF-8, no duplicate keys, nesting at
/// most `maximumDepth`. Callers bound the input size before calling it.
extension JSON {
    /// Why bytes are not JSON. Carries no input text, so it is safe in any description.
    struct ParseError: Error, Hashable {
        /// The byte offset where reading stopped.
        var offset: Int
        /// What was expected there.
        var expected: String
        var description: String { "not valid JSON at byte \(offset) (expected \(expected))" }
    }

    /// The deepest nesting accepted; bounds the recursion.
    static let maximumDepth = 32

    /// Parses `bytes` as one JSON value.
    static func parse(_ bytes: some Collection<UInt8>) throws(ParseError) -> JSON {
        var reader = Reader(bytes: Array(bytes))
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else { throw reader.error("end of input") }
        return value
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func error(_ expected: String) -> ParseError { ParseError(offset: index, expected: expected) }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ literal: String) throws(ParseError) {
            for byte in literal.utf8 {
                guard peek == byte else { throw error(literal) }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(ParseError) -> JSON {
            guard depth < JSON.maximumDepth else { throw error("less nesting") }
            switch peek {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default: return .number(try number())
            }
        }

        mutating func object(depth: Int) throws(ParseError) -> JSON {
            index += 1
            var members: [String: JSON] = [:]
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\"") else { throw error("a key") }
                let keyOffset = index
                let key = try string()
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                guard members[key] == nil else { throw ParseError(offset: keyOffset, expected: "a unique key") }
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                } else {
                    try expect("}")
                    return .object(members)
                }
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> JSON {
            index += 1
            var elements: [JSON] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                } else {
                    try expect("]")
                    return .array(elements)
                }
            }
        }

        mutating func number() throws(ParseError) -> String {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, isDigit(first) else { throw error("a value") }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard let byte = peek, isDigit(byte) else { throw error("a digit") }
                skipDigits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard let byte = peek, isDigit(byte) else { throw error("a digit") }
                skipDigits()
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func skipDigits() {
            while let byte = peek, isDigit(byte) { index += 1 }
        }
    }
}
