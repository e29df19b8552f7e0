/// What FCM answered to one send: success with the message name, or an error as a value (its FCM code, the
/// google.rpc status, and whether it blames the device's token).
///
/// Only transport failures throw; an answer never does. A malformed or oversized body keeps the status and has no
/// code.
public struct FCMAnswer: Sendable, Hashable {
    /// A `google.rpc.BadRequest` field violation.
    public struct FieldViolation: Sendable, Hashable {
        /// The field path, e.g. `message.token`.
        public var field: String
        public var description: String

        /// Creates an answer from its parts (for tests and simulators).
        public init(field: String, description: String) {
            self.field = field
            self.description = description
        }
    }

    /// The largest body read.
    public static let maximumBodySize = 64 * 1024
    /// The most field violations kept.
    public static let maximumFieldViolations = 16
    /// The message that marks a bad token when no field violation does.
    public static let invalidTokenMessage = "The registration token is not a valid FCM registration token"

    /// The HTTP status.
    public var status: Int
    /// The success answer's `name` (`projects/{p}/messages/{id}`).
    public var messageName: String?
    /// The `FcmError` detail's code.
    public var errorCode: FCMErrorCode?
    /// The google.rpc status (`error.status`): `UNAUTHENTICATED`, `PERMISSION_DENIED`, `NOT_FOUND`, …
    public var rpcStatus: String?
    /// `error.message`, made safe (printable, at most 256 characters, no token-like words).
    public var message: String?
    /// The `BadRequest` detail's violations.
    public var fieldViolations: [FieldViolation]

    /// Creates an answer from its parts (for tests and simulators).
    public init(
        status: Int, messageName: String? = nil, errorCode: FCMErrorCode? = nil, rpcStatus: String? = nil,
        message: String? = nil, fieldViolations: [FieldViolation] = []
    ) {
        self.status = status
        self.messageName = messageName
        self.errorCode = errorCode
        self.rpcStatus = rpcStatus
        self.message = message
        self.fieldViolations = fieldViolations
    }

    /// Whether FCM accepted the message.
    public var isSuccess: Bool { status == 200 }

    /// Whether the answer blames the device: a field violation on `message.token` or `message.fid`, or the
    /// "not a valid FCM registration token" message. A bad payload sent to many devices must not prune them all,
    /// so an `INVALID_ARGUMENT` without one of these does not name the token.
    public var namesTheToken: Bool {
        fieldViolations.contains { $0.field == "message.token" || $0.field == "message.fid" }
            || (message?.contains(Self.invalidTokenMessage) ?? false)
    }

    /// The reason to record: the FCM code, else the rpc status, else `HTTP<status>`.
    public var reason: String { errorCode?.rawValue ?? rpcStatus ?? "HTTP\(status)" }
}
