/// Strict JSON (RFC 8259) reading into, and writing from, `PayloadValue`.
///
/// The worker reads every job message and writes every payload; through `JSONDecoder`/`JSONEncoder` and Codable
/// that was most of a worker's CPU per single-device job (`PayloadValue` can only learn a value's type by trying
/// each type and catching the error). This reads the bytes once into the value tree and writes the tree once.
/// Stricter than Foundation's reader in one way, as RFC 8259: no trailing commas. Objects keep the last of
/// duplicate keys, as PostgreSQL's jsonb does (the job spec is stored as jsonb and read again for later batches).
/// Numbers with an integral value that fit in Int64 (below 2^53 if written with a fraction or exponent) are integers.
extension PayloadValue {
    /// Why a text is not JSON: what was wrong and at which byte. Never quotes the text.
    public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var offset: Int

        public init(_ message: String, offset: Int) {
            self.message = message
            self.offset = offset
        }

        public var description: String { "\(message) at byte \(offset)" }
    }

    /// The deepest nesting of arrays and objects accepted (as Foundation's JSON reader).
    public static let maximumJSONDepth = 512

    /// Parses one JSON text (surrounding whitespace allowed).
    public init(json bytes: some Collection<UInt8>) throws(JSONError) {
        let parsed: Result<PayloadValue, JSONError>? = bytes.withContiguousStorageIfAvailable { Self.parse($0) }
        switch parsed ?? Array(bytes).withUnsafeBufferPointer({ Self.parse($0) }) {
        case .success(let value): self = value
        case .failure(let error): throw error
        }
    }

    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<PayloadValue, JSONError> {
        var reader = JSONReader(bytes: buffer)
        do throws(JSONError) {
            let value = try reader.readValue()
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("unexpected text after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    /// The value as compact JSON with object keys sorted and `/` not escaped.
    public func jsonBytes() throws(JSONError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        try appendJSON(to: &out)
        return out
    }

    /// Appends the value as compact JSON (object keys sorted, `/` not escaped). Throws for a non-finite number.
    public func appendJSON(to out: inout [UInt8]) throws(JSONError) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): out.append(contentsOf: String(value).utf8)
        case .number(let value):
            guard value.isFinite else { throw JSONError("a number is not finite", offset: out.count) }
            if value == value.rounded(.towardZero), abs(value) < 1e15 {
                out.append(contentsOf: String(Int64(value)).utf8)  // 2.0 as 2, as JSONEncoder writes it
            } else {
                out.append(contentsOf: value.description.utf8)
            }
        case .string(let value): Self.appendString(value, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try value.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // The members sorted by key, each value with its key: no lookup per member.
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                try member.value.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                        hex[Int(byte & 0xF)],
                    ])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
