/// A `messages:send` body that passed every check FCM makes before looking at the target's fate.
struct ValidatedSend: Sendable, Hashable {
    /// The `message` object.
    var message: JSONValue
    var target: FCMSimulatorTarget
    var validateOnly: Bool
}

/// What FCM checks in a `messages:send` body, in order: JSON, unknown fields and types (BadRequest only), then the
/// Message rules of FCM.md (FcmError INVALID_ARGUMENT). Pure: bytes in, a ``ValidatedSend`` or a ``GoogleError`` out.
enum MessageValidation {
    /// What the request record keeps even when the body is refused.
    struct Seen: Sendable, Hashable {
        var target: FCMSimulatorTarget?
        var validateOnly = false
    }

    /// The target fields, one of which a Message must set.
    static let targetFields = ["token", "topic", "condition", "fid"]

    /// Validates a body; `seen` learns the target and `validate_only` as soon as they can be read.
    static func validate(_ body: [UInt8], seen: inout Seen) throws(GoogleError) -> ValidatedSend {
        let root: JSONValue
        do {
            root = try JSONParser.parse(body)
        } catch {
            throw .invalidJSON("Invalid JSON payload received. Unexpected token.", field: nil)
        }
        guard let members = root.members else {
            throw .invalidJSON("Invalid JSON payload received. Root element must be a message.", field: nil)
        }
        let messageValue = members.last { SchemaCheck.snakeCase($0.key) == "message" }?.value
        if case .bool(true) = members.last(where: { SchemaCheck.snakeCase($0.key) == "validate_only" })?.value {
            seen.validateOnly = true
        }
        let messageMembers = messageValue?.members ?? []
        seen.target = target(in: messageMembers)
        try SchemaCheck.check(members, as: .request, path: "")

        let target = try oneTarget(in: messageMembers)
        try TargetValidation.check(target)
        try PayloadValidation.check(messageMembers, target: target)
        return ValidatedSend(message: messageValue ?? .object([]), target: target, validateOnly: seen.validateOnly)
    }

    /// The first target field set (not null) with a string value.
    static func target(in message: [JSONValue.Member]) -> FCMSimulatorTarget? {
        for member in message {
            guard case .string(let value) = member.value else { continue }
            switch SchemaCheck.snakeCase(member.key) {
            case "token": return .token(value)
            case "topic": return .topic(value)
            case "condition": return .condition(value)
            case "fid": return .fid(value)
            default: continue
            }
        }
        return nil
    }

    /// Exactly one target: none is "Recipient of the message is not set.", a second one a oneof error.
    private static func oneTarget(in message: [JSONValue.Member]) throws(GoogleError) -> FCMSimulatorTarget {
        let set = message.filter { member in
            if case .null = member.value { return false }
            return targetFields.contains(SchemaCheck.snakeCase(member.key))
        }
        guard set.count <= 1 else {
            throw .invalidJSON(
                "Invalid value at 'message' (oneof), oneof field 'target' is already set. "
                    + "Cannot set '\(SchemaCheck.snakeCase(set[1].key))'",
                field: "message")
        }
        guard let target = target(in: message) else {
            throw .invalidArgument("Recipient of the message is not set.", field: "message")
        }
        return target
    }
}
