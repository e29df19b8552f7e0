/// One message the simulator accepted (answered 200, not `validate_only`).
public struct FCMSimulatorRecord: Sendable, Hashable {
    /// The project from the path, as sent (id or number).
    public var project: String
    /// The recipient.
    public var target: FCMSimulatorTarget
    /// The `message` object as compact JSON, members in the order sent.
    public var messageJSON: String
    /// The message id answered in `name` (`projects/<project>/messages/<messageID>`).
    public var messageID: String
    /// When the simulator accepted it, in seconds since 1970 (``FCMSimulatorConfiguration/now``).
    public var receivedAt: Int64
    /// The access token the request carried. Kept for tests; never logged nor written to the record file.
    public var accessToken: String
    /// The service account whose access token it was.
    public var clientEmail: String

    /// Creates a record.
    public init(
        project: String,
        target: FCMSimulatorTarget,
        messageJSON: String,
        messageID: String,
        receivedAt: Int64,
        accessToken: String,
        clientEmail: String
    ) {
        self.project = project
        self.target = target
        self.messageJSON = messageJSON
        self.messageID = messageID
        self.receivedAt = receivedAt
        self.accessToken = accessToken
        self.clientEmail = clientEmail
    }
}
