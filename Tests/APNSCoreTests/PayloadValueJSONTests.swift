import APNSCore
import Foundation
import Testing

@Suite struct PayloadValueJSONTests {
    static func parse(_ text: String) throws -> PayloadValue { try PayloadValue(json: Array(text.utf8)) }

    /// What Foundation's decoder makes of the same text (the reference: the worker used it before).
    static func reference(_ text: String) throws -> PayloadValue {
        try JSONDecoder().decode(PayloadValue.self, from: Data(text.utf8))
    }

    static let valid = [
        #"{}"#, #"[]"#, #"  {"a" : [1, -2, 3.5, -0.25e2, 1E+3, 0, -0, true, false, null, "x"]}  "#,
        #"{"alert":{"title":"Hé","body":"雪 🌨️"},"badge":9,"sound":"default"}"#,
        #""\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \u4e2d""#,
        #"9223372036854775807"#, #"-9223372036854775808"#, #"9223372036854775808"#, #"1.7976931348623157e308"#,
        #"[[[[[]]]]]"#, "\t\n\r [1]\n",
    ]

    @Test(arguments: valid)
    func readsWhatFoundationReadsTheSameWay(text: String) throws {
        #expect(try Self.parse(text) == Self.reference(text))
    }

    static let invalid = [
        "", " ", "{", "}", "{a:1}", "{'a':1}", "[1 2]", "01", "-", "1.", ".5", "1e", "+1",
        "tru", "nul", "[true false]", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00 \"",
        "\"a\u{01}b\"", "{\"a\":1} x", "[1]]", "1e999", "NaN", "[\"\\ud83d\\u0041\"]",
    ]

    @Test(arguments: invalid)
    func rejectsWhatIsNotJSONAsFoundationDoes(text: String) {
        #expect(throws: PayloadValue.JSONError.self) { try Self.parse(text) }
        #expect(throws: (any Error).self) { try Self.reference(text) }
    }

    @Test func isStricterThanFoundationOnTrailingCommasAndKeepsTheLastDuplicateKeyAsJSONBDoes() throws {
        for text in ["[1,]", #"{"a":1,}"#] {
            #expect(throws: PayloadValue.JSONError.self) { try Self.parse(text) }
        }
        #expect(try Self.parse(#"{"a":1,"a":2}"#) == ["a": 2])
    }

    @Test func rejectsInvalidUTF8AndTooDeepNesting() {
        #expect(throws: PayloadValue.JSONError.self) { try PayloadValue(json: [0x22, 0xC3, 0x28, 0x22]) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: PayloadValue.JSONError.self) { try Self.parse(deep) }
        #expect((try? Self.parse(String(repeating: "[", count: 500) + String(repeating: "]", count: 500))) != nil)
    }

    /// A string's bytes are accepted exactly when the standard library's validating initializer accepts them: the
    /// reader decodes on the fast, repairing path and compares, so a repair of the same length (a three-byte
    /// truncated sequence becomes one three-byte U+FFFD) must still be refused. Known cases, then random bytes.
    @Test func acceptsAStringExactlyWhenItsBytesAreWellFormedUTF8() {
        func agrees(_ bytes: [UInt8]) -> Bool {
            let json = [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
            let read = try? PayloadValue(json: json)
            guard let expected = String(validating: bytes, as: UTF8.self) else { return read == nil }
            return read == .string(expected)
        }
        let known: [[UInt8]] = [
            [], Array("plain".utf8), Array("é😀\u{FFFD}".utf8), [0xEF, 0xBF, 0xBD],
            [0xF0, 0x9F, 0x98, 0x41], [0xE2, 0x82, 0x41], [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x41, 0xF0, 0x9F, 0x98], [0x80, 0x80, 0x80],
        ]
        for bytes in known { #expect(agrees(bytes), "\(bytes)") }
        var generator = SystemRandomNumberGenerator()
        // Bytes a string may hold unescaped (no quote, backslash or control character), mostly above 0x7F.
        let alphabet: [UInt8] = [0x41, 0x7E] + Array(0x80...0xFF)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            #expect(agrees(bytes), "\(bytes)")
        }
    }

    @Test func writesCompactSortedJSONWithoutEscapingSlashes() throws {
        let value: PayloadValue = [
            "z": 1, "a": ["b": "x/y", "a": [true, nil, 2.5, 2.0]], "q": "\"quote\" \\ \n\t\u{01}é",
        ]
        let text = String(decoding: try value.jsonBytes(), as: UTF8.self)
        #expect(text == #"{"a":{"a":[true,null,2.5,2],"b":"x/y"},"q":"\"quote\" \\ \n\t\u0001é","z":1}"#)
        #expect(throws: PayloadValue.JSONError.self) { try PayloadValue.number(.infinity).jsonBytes() }
    }

    @Test func whatItWritesFoundationReadsBackAsTheSameValue() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let bytes = try value.jsonBytes()
            let text = String(decoding: bytes, as: UTF8.self)
            let reread = try Self.reference(text)
            #expect(try PayloadValue(json: bytes) == reread, "\(text)")
            // And it is the value that was written (an integral number reads back as an integer).
            #expect(try PayloadValue(json: bytes) == Self.normalized(value), "\(text)")
            // Foundation's JSONSerialization agrees that it is JSON, too.
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil)
        }
    }

    static func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> PayloadValue {
        let kind = Int.random(in: depth > 3 ? 0...4 : 0...6, using: &generator)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &generator))
        case 3: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 64 + 0.5)
        case 4: return .string(randomString(using: &generator))
        case 5:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    randomValue(depth: depth + 1, using: &generator)
                })
        default:
            var members: [String: PayloadValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                members[randomString(using: &generator)] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    /// `value` as reading its JSON gives it: numbers with an integral value become integers.
    static func normalized(_ value: PayloadValue) -> PayloadValue {
        switch value {
        case .number(let number) where number == number.rounded() && abs(number) < 9.0e15:
            return .integer(Int64(number))
        case .array(let values): return .array(values.map(normalized))
        case .object(let members): return .object(members.mapValues(normalized))
        default: return value
        }
    }

    static func randomString(using generator: inout SystemRandomNumberGenerator) -> String {
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "中", "😀", "\u{7F}",
        ]
        return String(
            String.UnicodeScalarView(
                (0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
    }
}
