extension JSON.Reader {
    /// Reads a string literal at `index` (which is its opening quote): escapes decoded, surrogate pairs joined,
    /// unescaped control characters and invalid UTF-8 refused.
    mutating func string() throws(JSON.ParseError) -> String {
        index += 1
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw error("a closing quote") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: out, as: UTF8.self) else { throw error("valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &out)
            case 0x00..<0x20:
                throw error("an escaped control character")
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(JSON.ParseError) {
        guard let byte = peek else { throw error("an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                try expect("\\u")
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("a low surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("a Unicode scalar") }
            out.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw error("an escape")
        }
    }

    private mutating func hex4() throws(JSON.ParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek else { throw error("four hex digits") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("four hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
