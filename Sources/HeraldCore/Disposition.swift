import APNSCore

/// What happened to one notification, as the deliverer saw it.
public enum DeliveryResult: Sendable, Hashable {
    /// APNs answered (success or rejection).
    case answered(APNSOutcome)
    /// No answer: the transport failed (timeout, connection lost, refused).
    case transportFailure(String)
}

/// What the pipeline does about one notification's result.
public enum Disposition: Sendable, Hashable {
    /// APNs accepted it.
    case delivered
    /// The token is dead: prune the device (for 410, only if it registered before `timestamp`) and record it.
    case prune(reason: APNSReason, timestamp: Int64?)
    /// A transient failure: try again after `delay` (in-process first, then through the delay queues).
    case retry(reason: String, delay: Duration)
    /// Transient, but out of attempts: park it with the reason.
    case exhausted(reason: String)
    /// This device failed for a reason that will not change by retrying; keep the device, record the failure.
    case failDevice(reason: APNSReason)
    /// The whole job is wrong (topic, credentials, payload): stop it instead of burning retries on every device.
    case failJob(reason: APNSReason)
}

/// Backoff for transient failures: exponential with full jitter, bounded attempts.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int = 5
    /// Delay before the second attempt.
    public var baseDelay: Duration = .milliseconds(200)
    /// The longest delay.
    public var maximumDelay: Duration = .seconds(30)
    /// Attempts in all for a transport failure (no answer: the connection was lost, the stream was reset, the
    /// request timed out). Retried promptly, on whichever connection the client hands the request to next, before
    /// any delayed retry queue: those are for APNs' own 429 and 5xx answers.
    public var transportAttempts: Int = 4
    /// Delay before the second attempt after a transport failure (doubling, with jitter).
    public var transportDelay: Duration = .milliseconds(50)

    public init(
        maximumAttempts: Int = 5, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(30),
        transportAttempts: Int = 4, transportDelay: Duration = .milliseconds(50)
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.transportAttempts = transportAttempts
        self.transportDelay = transportDelay
    }

    /// The delay before attempt `attempt + 1`, with `jitter` in 0...1 choosing within the window.
    public func delay(afterAttempt attempt: Int, jitter: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(baseDelay * (1 << exponent), maximumDelay)
        return ceiling * min(max(jitter, 0), 1)
    }
}

/// Decides what to do with a result. Pure and exhaustive over every status and reason APNs documents (APNS.md);
/// an unknown reason falls back on its status class.
///
/// - Parameters:
///   - result: what the transport returned.
///   - attempt: which attempt this was, from 1.
///   - policy: the retry bounds.
///   - jitter: a value in 0...1 for the backoff.
public func disposition(
    for result: DeliveryResult,
    attempt: Int,
    policy: RetryPolicy = .init(),
    jitter: Double = 1
) -> Disposition {
    func transient(_ reason: String) -> Disposition {
        attempt >= policy.maximumAttempts
            ? .exhausted(reason: reason)
            : .retry(reason: reason, delay: policy.delay(afterAttempt: attempt, jitter: jitter))
    }

    let outcome: APNSOutcome
    switch result {
    case .transportFailure(let reason):
        guard attempt < policy.transportAttempts else { return .exhausted(reason: reason) }
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(policy.transportDelay * (1 << exponent), policy.maximumDelay)
        return .retry(reason: reason, delay: ceiling * min(max(jitter, 0), 1))
    case .answered(let answered):
        outcome = answered
    }
    if outcome.isSuccess { return .delivered }
    let reason = outcome.reason ?? APNSReason(rawValue: "HTTP\(outcome.status)")

    switch reason {
    // Dead or foreign tokens: prune (410 subject to its timestamp).
    case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic:
        return .prune(reason: reason, timestamp: outcome.status == 410 ? outcome.timestamp : nil)
    // Transient: the server or the connection, not the notification.
    case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout,
        .expiredProviderToken, .tooManyProviderTokenUpdates, .unrelatedKeyIdInToken:
        return transient(reason.rawValue)
    // Job-level: the topic, the credentials or the payload are wrong for every device.
    case .badTopic, .topicDisallowed, .missingTopic, .payloadTooLarge, .payloadEmpty, .badCollapseId,
        .badExpirationDate, .badMessageId, .badPriority, .invalidPushType, .duplicateHeaders, .missingDeviceToken,
        .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken, .missingProviderToken,
        .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .badPath, .methodNotAllowed:
        return .failJob(reason: reason)
    default:
        switch outcome.status {
        case 410: return .prune(reason: reason, timestamp: outcome.timestamp)
        case 429, 500..<600: return transient(reason.rawValue)
        case 403, 404, 405, 413: return .failJob(reason: reason)
        default: return .failDevice(reason: reason)
        }
    }
}
