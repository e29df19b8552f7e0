/// A JSON value that keeps the order of object members, as FCM's error texts need (`message.data[0].value` names
/// the first entry as sent) and as the records keep the message.
enum JSONValue: Sendable, Hashable {
    /// One member of an object, in the order it was sent.
    struct Member: Sendable, Hashable {
        var key: String
        var value: JSONValue
    }

    case null
    case bool(Bool)
    /// A number, kept as its literal text.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// The members of an object; nil for any other value.
    var members: [Member]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The text of a string; nil for any other value.
    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of the last member named `key` (case-sensitive), if this is an object.
    subscript(key: String) -> JSONValue? {
        members?.last { $0.key == key }?.value
    }

    /// The compact JSON text of this value.
    var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let literal): output += literal
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(member.key, to: &output)
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue {
    /// Builds an object from key-value pairs, in order.
    static func object(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(pairs.map { Member(key: $0.key, value: $0.value) })
    }
}
