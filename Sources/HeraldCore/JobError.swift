/// Why a job cannot be delivered at all. Its description names the rule and is safe to log and to put in the
/// `x-herald-reason` header: never a device token or the payload.
public struct JobError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, stable for metrics and headers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The message body is not JSON or not a job.
        public static let malformed = Code(rawValue: "malformed")
        /// The job names an app that is not in the apps file.
        public static let unknownApp = Code(rawValue: "unknown_app")
        /// The notification breaks one of Apple's rules.
        public static let invalidNotification = Code(rawValue: "invalid_notification")
        /// The target is empty or too large.
        public static let invalidTarget = Code(rawValue: "invalid_target")
        /// A number, string or list is outside the bounds of where it lands (`JobLimits`).
        public static let outOfBounds = Code(rawValue: "out_of_bounds")
        /// The message is larger than the configured limit.
        public static let tooLarge = Code(rawValue: "too_large")
        /// The broker delivered the message more often than the worker's limit, each time unsettled.
        public static let redelivered = Code(rawValue: "redelivered")
        /// A dependency kept failing (the database answered, but the work failed again and again).
        public static let failedRepeatedly = Code(rawValue: "failed_repeatedly")
        /// APNs rejected the job as a whole (bad topic, credentials, payload).
        public static let rejectedByAPNs = Code(rawValue: "rejected_by_apns")

        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
