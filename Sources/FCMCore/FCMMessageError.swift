/// Why a message could not be built. Names the field path (`android.ttl` for what the job sets, `fcm.android.ttl`
/// for its `fcm` block, `data.from` for a custom-data key) and never holds a device identifier or a payload value.
public struct FCMMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Code: String, Sendable, Hashable {
        /// Not JSON, or JSON of the wrong shape where an object was required.
        case malformedJSON
        /// A field the Message resource does not have, or one Herald sets itself (the target).
        case unknownField
        /// A field of the wrong type, format or range.
        case invalidValue
        /// A reserved data key (`from`, `message_type`, `google…`, `gcm…`).
        case reservedKey
        /// The data payload or the input is over its size limit.
        case tooLarge
    }

    /// What went wrong.
    public var code: Code
    /// The path of the field at fault.
    public var field: String
    /// A sentence for the operator.
    public var message: String

    /// Creates an error for the field at `field`.
    public init(_ code: Code, field: String, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
