/// Why a service-account key file was refused. Names the field at fault and never holds the key, the file or any
/// other value read from it, so it is safe to log.
public struct FCMServiceAccountError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Code: String, Sendable, Hashable {
        /// The file is over `FCMServiceAccount.maximumFileSize`.
        case tooLarge
        /// The file is not a JSON object.
        case malformedJSON
        /// A required field is absent (or null).
        case missingField
        /// A field is present but its value is not acceptable.
        case invalidField
    }

    /// What went wrong.
    public var code: Code
    /// The key-file field at fault (`private_key`, `project_id`, …), nil for the file as a whole.
    public var field: String?
    /// A sentence for the operator, without any secret.
    public var message: String

    /// Creates an error; `message` must not contain any value read from the file.
    public init(_ code: Code, field: String?, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field {
            "service account key file: \(field): \(message)"
        } else {
            "service account key file: \(message)"
        }
    }
}
