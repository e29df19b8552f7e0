/// Checks a JSON value against a ``FieldSchema`` as Google's proto3 JSON reader does: the first unknown field or
/// wrongly typed value, in the order sent, is a 400 INVALID_ARGUMENT with a BadRequest detail only. `null` stands for
/// an absent field; lowerCamelCase names are read as their snake_case field.
enum SchemaCheck {
    /// Checks the members of an object against `schema`; `path` is where it sits (`""` for the request itself).
    static func check(_ members: [JSONValue.Member], as schema: ObjectSchema, path: String) throws(GoogleError) {
        for member in members {
            guard let field = schema.fields[snakeCase(member.key)] else {
                let location = path.isEmpty ? "" : " at '\(path)'"
                throw .invalidJSON(
                    "Invalid JSON payload received. Unknown name \"\(member.key)\"\(location): Cannot find field.",
                    field: path.isEmpty ? nil : path)
            }
            let fieldPath = path.isEmpty ? snakeCase(member.key) : "\(path).\(snakeCase(member.key))"
            try check(member.value, as: field, path: fieldPath)
        }
    }

    /// Checks one value against its field's schema.
    static func check(_ value: JSONValue, as schema: FieldSchema, path: String) throws(GoogleError) {
        switch (schema, value) {
        case (_, .null), (.string, .string), (.bool, .bool), (.anyObject, .object):
            return
        case (.integer, .number(let literal)) where Int32(literal) != nil:
            return
        case (.integer, .string(let text)) where Int32(text) != nil:
            return
        case (.stringList, .array(let values)):
            for (index, element) in values.enumerated() { try check(element, as: .string, path: "\(path)[\(index)]") }
        case (.stringMap, .object(let members)):
            for (index, member) in members.enumerated() {
                guard case .string = member.value else {
                    throw typeError("\(path)[\(index)].value", .string, member.value)
                }
            }
        case (.message(let object), .object(let members)):
            try check(members, as: object, path: path)
        default:
            throw typeError(path, schema, value)
        }
    }

    /// `Invalid value at 'message.data[0].value' (TYPE_STRING), 1`.
    static func typeError(_ path: String, _ schema: FieldSchema, _ value: JSONValue) -> GoogleError {
        let shown: String
        switch value {
        case .object: shown = "Starting an object on a scalar field"
        case .array: shown = "Proto field is not repeating, cannot start list."
        default: shown = bounded(value.serialized)
        }
        return .invalidJSON("Invalid value at '\(path)' (\(schema.typeName)), \(shown)", field: path)
    }

    /// A wire value cut to a length fit for an error text.
    static func bounded(_ text: String) -> String {
        text.count <= 200 ? text : String(text.prefix(200)) + "…"
    }

    /// `collapseKey` → `collapse_key`; snake_case names are unchanged.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase, character.isASCII {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
