extension Shape {
    /// Checks `value` against the shape and returns its canonical form. Errors name `path`.
    ///
    /// `strict` is a job's `fcm` block, whose rules `schemas/job.schema.json` states exactly (`jsonSchema`): field
    /// names in `snake_case` only, enumerations in FCM's upper case, durations without leading zeros.
    func validate(_ value: JSON, path: String, strict: Bool = false) throws(FCMMessageError) -> JSON {
        switch self {
        case .string:
            return .string(try Self.string(value, path: path))
        case .url:
            let text = try Self.string(value, path: path)
            guard text.hasPrefix("https://") || text.hasPrefix("http://"), text.utf8.count <= 2048 else {
                throw FCMMessageError(.invalidValue, field: path, "is not an http(s) URL")
            }
            return value
        case .httpsURL:
            guard Validation.isHTTPSURL(try Self.string(value, path: path)) else {
                throw FCMMessageError(.invalidValue, field: path, "is not an https URL")
            }
            return value
        case .color:
            let bytes = Array(try Self.string(value, path: path).utf8)
            guard bytes.count == 7, bytes[0] == UInt8(ascii: "#"), bytes.dropFirst().allSatisfy(Self.isHexDigit) else {
                throw FCMMessageError(.invalidValue, field: path, "is not a colour in #rrggbb form")
            }
            return value
        case .label:
            let text = try Self.string(value, path: path)
            guard (1...50).contains(text.utf8.count),
                text.utf8.allSatisfy({ Validation.isAlphanumeric($0) || "-_.~%".utf8.contains($0) })
            else {
                throw FCMMessageError(.invalidValue, field: path, "is not 1–50 characters of [a-zA-Z0-9-_.~%]")
            }
            return value
        case .duration:
            let text = try Self.string(value, path: path)
            let whole = text.prefix { $0 != "." && $0 != "s" }
            guard Self.isDuration(text), !strict || whole == "0" || !whole.hasPrefix("0") else {
                throw FCMMessageError(
                    .invalidValue, field: path, "is not a duration \"<seconds>s\" within 0…\(Self.maximumDuration)")
            }
            return value
        case .bool:
            guard case .bool = value else { throw FCMMessageError(.invalidValue, field: path, "is not a boolean") }
            return value
        case .integer(let range):
            if let number = value.int64, range.contains(number) { return value }
            // A number with no fraction (`5.0`, `5e0`) is an integer to JSON Schema, and is sent as one.
            guard case .number(let text) = value, let number = Double(text), number.rounded() == number,
                Double(range.lowerBound) <= number, number <= Double(range.upperBound)
            else {
                throw FCMMessageError(
                    .invalidValue, field: path, "is not an integer within \(range.lowerBound)…\(range.upperBound)")
            }
            return .number(String(Int64(number)))
        case .fraction(let range):
            guard case .number(let text) = value, let number = Double(text), range.contains(number) else {
                throw FCMMessageError(
                    .invalidValue, field: path, "is not a number within \(range.lowerBound)…\(range.upperBound)")
            }
            return value
        case .enumeration(let allowed):
            let given = try Self.string(value, path: path)
            let text = strict ? given : given.uppercased()
            guard allowed.contains(text) else {
                throw FCMMessageError(.invalidValue, field: path, "is not one of \(allowed.joined(separator: ", "))")
            }
            return .string(text)
        case .array(let element):
            guard case .array(let elements) = value else {
                throw FCMMessageError(.invalidValue, field: path, "is not an array")
            }
            var out: [JSON] = []
            for (index, item) in elements.enumerated() {
                out.append(try element.validate(item, path: "\(path)[\(index)]", strict: strict))
            }
            return .array(out)
        case .dataMap, .stringMap:
            let members = try Self.object(value, path: path)
            for (key, item) in members {
                if case .dataMap = self { try Self.checkDataKey(key, path: path) }
                guard case .string = item else {
                    throw FCMMessageError(
                        .invalidValue, field: "\(path).\(key)", "is not a string (FCM takes strings only)")
                }
            }
            return value
        case .anyObject:
            _ = try Self.object(value, path: path)
            return value
        case .object(let fields, let required):
            return try Self.validateObject(value, fields: fields, required: required, path: path, strict: strict)
        }
    }

    private static func validateObject(
        _ value: JSON, fields: [String: Shape], required: Set<String>, path: String, strict: Bool
    ) throws(FCMMessageError) -> JSON {
        var out: [String: JSON] = [:]
        for (key, item) in try object(value, path: path) {
            let name = strict ? key : snakeCase(key)
            let fieldPath = path.isEmpty ? name : "\(path).\(name)"
            guard let shape = fields[name] else {
                throw FCMMessageError(
                    .unknownField, field: path.isEmpty ? key : "\(path).\(key)", "is not a field here")
            }
            guard out[name] == nil else {
                throw FCMMessageError(.invalidValue, field: fieldPath, "is given twice (snake_case and camelCase)")
            }
            out[name] = try shape.validate(item, path: fieldPath, strict: strict)
        }
        for name in required.sorted() where out[name] == nil {
            throw FCMMessageError(.invalidValue, field: path.isEmpty ? name : "\(path).\(name)", "is required")
        }
        return .object(out)
    }

    /// Refuses the data keys FCM reserves: `from`, `message_type`, and any starting with `google` or `gcm`
    /// (compared without case, to be safe), and the empty key.
    static func checkDataKey(_ key: String, path: String) throws(FCMMessageError) {
        let lower = key.lowercased()
        guard !key.isEmpty, lower != "from", lower != "message_type", !lower.hasPrefix("google"),
            !lower.hasPrefix("gcm")
        else {
            throw FCMMessageError(
                .reservedKey, field: "\(path).\(key)",
                "is a reserved data key (from, message_type, google…, gcm…) or empty")
        }
    }

    private static func string(_ value: JSON, path: String) throws(FCMMessageError) -> String {
        guard let text = value.string else { throw FCMMessageError(.invalidValue, field: path, "is not a string") }
        return text
    }

    private static func object(_ value: JSON, path: String) throws(FCMMessageError) -> [String: JSON] {
        guard let members = value.object else {
            throw FCMMessageError(.invalidValue, field: path, "is not an object")
        }
        return members
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        Validation.isAlphanumeric(byte) && (byte <= UInt8(ascii: "9") || (byte | 0x20) <= UInt8(ascii: "f"))
    }

    /// `lowerCamelCase` → `snake_case`; a key without capitals is returned as it is.
    static func snakeCase(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return key }
        var out = ""
        for character in key {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// `"<digits>[.<1–9 digits>]s"` of at most `maximumDuration` seconds.
    static func isDuration(_ text: String) -> Bool {
        guard text.hasSuffix("s") else { return false }
        let number = text.dropLast().split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = number.first, !whole.isEmpty, whole.utf8.count <= 10,
            whole.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let seconds = Int64(whole)
        else { return false }
        if number.count == 2 {
            let fraction = number[1]
            guard (1...9).contains(fraction.utf8.count),
                fraction.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return false }
            return seconds < maximumDuration || (seconds == maximumDuration && fraction.allSatisfy { $0 == "0" })
        }
        return seconds <= maximumDuration
    }
}
