/// Why a channel operation did not succeed: APNs refused it (`status` and `reason`), or it got no answer.
///
/// The description names the operation and APNs' reason; it never holds the provider token or the key.
public struct APNSChannelsError: Error, Sendable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: String, Sendable, Hashable {
        case createChannel = "creating a channel"
        case readChannel = "reading a channel"
        case deleteChannel = "deleting a channel"
        case listChannels = "listing channels"
        case broadcast = "sending a broadcast"
    }

    /// What was being done.
    public var operation: Operation
    /// APNs' HTTP status, if it answered.
    public var status: Int?
    /// APNs' `reason`, if it answered with one.
    public var reason: String?
    /// A sentence safe to show and log (no token, key or payload).
    public var message: String
    /// Whether the same request may succeed later: no answer (timeout, connection), 429 or 5xx.
    public var isTransient: Bool
    /// Whether the app has as many channels as Apple allows in the environment: APNs answered
    /// CannotCreateChannelConfig, or the recorded channels already reached ``channelLimit`` before asking.
    public var isQuotaReached: Bool
    /// `apns-request-id` of APNs' answer, if any.
    public var requestID: String?

    public init(
        _ operation: Operation, status: Int? = nil, reason: String? = nil, message: String, isTransient: Bool,
        isQuotaReached: Bool = false, requestID: String? = nil
    ) {
        self.operation = operation
        self.status = status
        self.reason = reason
        self.message = message
        self.isTransient = isTransient
        self.isQuotaReached = isQuotaReached
        self.requestID = requestID
    }

    public var description: String { "\(operation.rawValue) failed: \(message)" }

    /// The most channels an app may have in one environment.
    public static let channelLimit = 10_000

    static let quotaExplanation =
        "the app has reached Apple's limit of 10,000 channels in this environment; delete channels that are no "
        + "longer needed (herald channels gc, herald channels delete)"

    /// The error of a create refused before asking APNs, because the app's recorded channels in the environment
    /// already reached ``channelLimit``: the same message as APNs' CannotCreateChannelConfig.
    public static func quotaReached() -> APNSChannelsError {
        APNSChannelsError(.createChannel, message: quotaExplanation, isTransient: false, isQuotaReached: true)
    }

    /// The error of an APNs answer that was not the operation's success.
    static func refused(_ operation: Operation, status: Int, reason: String?, requestID: String?) -> APNSChannelsError {
        let transient = status == 429 || (500...599).contains(status)
        if reason == ChannelReason.cannotCreateChannelConfig {
            return APNSChannelsError(
                operation, status: status, reason: reason, message: quotaExplanation, isTransient: false,
                isQuotaReached: true, requestID: requestID)
        }
        var message = "APNs answered \(status)"
        if let reason {
            message += " \(reason)"
            if let explanation = ChannelReason.explanation(reason) { message += ": \(explanation)" }
        } else if transient {
            message += ": APNs is unavailable or throttling; try again later"
        }
        return APNSChannelsError(
            operation, status: status, reason: reason, message: message, isTransient: transient, requestID: requestID)
    }
}
