/// What happened to one notification, as the deliverer saw it.
public enum DeliveryResult: Sendable, Hashable {
    /// The provider answered (success or rejection).
    case answered(ProviderAnswer)
    /// No answer: the transport failed (timeout, connection lost, refused).
    case transportFailure(String)
}

/// What the pipeline does about one notification's result.
public enum Disposition: Sendable, Hashable {
    /// The provider accepted it.
    case delivered
    /// The token is dead: prune the device (only if it registered before `timestamp`, when the provider gave one)
    /// and record it.
    case prune(reason: ProviderReason, timestamp: Int64?)
    /// A transient failure: try again after `delay` (in-process first, then through the delay queues).
    case retry(reason: String, delay: Duration)
    /// Transient, but out of attempts: park it with the reason.
    case exhausted(reason: String)
    /// This device failed for a reason that will not change by retrying; keep the device, record the failure.
    case failDevice(reason: ProviderReason)
    /// The whole job is wrong (topic, credentials, payload): stop it instead of burning retries on every device.
    case failJob(reason: ProviderReason)
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

/// Decides what to do with a result: the provider's table (`SettlementTable`) gives the answer's verdict, the retry
/// policy bounds the attempts, and a transient answer waits at least the provider's `Retry-After`.
///
/// - Parameters:
///   - result: what the transport returned.
///   - attempt: which attempt this was, from 1.
///   - policy: the retry bounds.
///   - jitter: a value in 0...1 for the backoff.
///   - table: the provider's table of answers.
public func disposition(
    for result: DeliveryResult,
    attempt: Int,
    policy: RetryPolicy = .init(),
    jitter: Double = 1,
    table: some SettlementTable = APNSSettlementTable()
) -> Disposition {
    let answer: ProviderAnswer
    switch result {
    case .transportFailure(let reason):
        guard attempt < policy.transportAttempts else { return .exhausted(reason: reason) }
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(policy.transportDelay * (1 << exponent), policy.maximumDelay)
        return .retry(reason: reason, delay: ceiling * min(max(jitter, 0), 1))
    case .answered(let answered):
        answer = answered
    }
    switch table.verdict(on: answer) {
    case .delivered:
        return .delivered
    case .prune:
        return .prune(reason: table.reason(of: answer), timestamp: answer.invalidSince)
    case .failDevice:
        return .failDevice(reason: table.reason(of: answer))
    case .failJob:
        return .failJob(reason: table.reason(of: answer))
    case .transient:
        let reason = table.reason(of: answer).rawValue
        guard attempt < policy.maximumAttempts else { return .exhausted(reason: reason) }
        let backoff = policy.delay(afterAttempt: attempt, jitter: jitter)
        return .retry(reason: reason, delay: max(backoff, answer.retryAfter ?? .zero))
    }
}
