import HeraldCore

/// Why a job was not published. `description` is safe to log: it names the rule or the broker's answer, never a
/// device token, a payload or a password.
public struct ProducerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The job breaks a rule (`JobError` underneath): nothing was published.
        public static let invalidJob = Code(rawValue: "invalid_job")
        /// The typed payload breaks one of Apple's rules: nothing was published.
        public static let invalidPayload = Code(rawValue: "invalid_payload")
        /// The broker could not be reached or did not confirm the message: it may or may not have been queued, so
        /// publish again with the same id (the id makes the worker send it once).
        public static let publishFailed = Code(rawValue: "publish_failed")

        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    /// The cause (`JobError`, `APNSPayloadError`, `AMQPError`).
    public var underlying: (any Error)?
    public var file: String
    public var line: Int

    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// The job-level code for invalid jobs (`malformed`, `invalid_notification`, …).
    public var jobErrorCode: JobError.Code? { (underlying as? JobError)?.code }

    public var description: String { "\(code): \(message)" }
}
