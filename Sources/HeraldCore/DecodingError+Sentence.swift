import Foundation

extension DecodingError {
    /// Where a JSON document (the apps file, a configuration file) does not have the expected shape, in a sentence:
    /// `apps[0].environment must be production or sandbox`, `apps[1] has no "topic"` — never the library's debug
    /// description. `root` names the document when the problem is at its top.
    public func sentence(root: String = "the document") -> String {
        switch self {
        case .keyNotFound(let key, let context):
            return "\(Self.field(context.codingPath, root: root)) has no \"\(key.stringValue)\""
        case .typeMismatch(let type, let context):
            return "\(Self.field(context.codingPath, root: root)) is not \(Self.kind(type))"
        case .valueNotFound(let type, let context):
            return "\(Self.field(context.codingPath, root: root)) is null, not \(Self.kind(type))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "\(root) is not valid JSON" }
            let path = context.codingPath
            let name = Self.field(path, root: root)
            let key = path.last?.stringValue
            if key == "environment" || path.dropLast().last?.stringValue == "environments" {
                return "\(name) must be production or sandbox"
            }
            // Herald's own decoders say what they expect ("auth.type must be token or certificate").
            if context.debugDescription.contains(" must ") {
                return "\(Self.field(Array(path.dropLast()), root: root)): \(context.debugDescription)"
            }
            return "\(name) has a value that is not allowed"
        @unknown default:
            return "\(root) does not have the expected shape"
        }
    }

    /// `apps[0].auth.key_file`.
    static func field(_ path: [any CodingKey], root: String) -> String {
        guard !path.isEmpty else { return root }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "a list"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}
