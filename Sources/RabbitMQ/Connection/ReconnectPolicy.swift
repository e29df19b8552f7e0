/// How a connection recovers from losing the broker: exponential backoff with jitter between attempts.
///
/// Attempt n waits `min(maximumDelay, initialDelay × multiplierⁿ⁻¹)`, of which the fraction `jitter` is drawn at
/// random, so that many workers cut off together do not reconnect in lockstep. ``delay(beforeAttempt:random:)``
/// is pure; `random` is injectable so tests get deterministic delays.
public struct ReconnectPolicy: Sendable {
    /// The wait before the first attempt.
    public var initialDelay: Duration
    /// The longest wait between attempts.
    public var maximumDelay: Duration
    /// Growth factor of the wait from one attempt to the next.
    public var multiplier: Double
    /// The share of each wait (0…1) that is random: the wait lies in `[delay × (1 − jitter), delay]`.
    public var jitter: Double
    /// Attempts in a row before the connection gives up and fails for good; `nil` tries forever.
    public var maximumAttempts: Int?
    /// A number in `0..<1` for the jitter; replace it in tests for deterministic delays.
    public var random: @Sendable () -> Double

    /// Creates a policy; the defaults suit a worker (100 ms, doubling, at most 30 s, half of it jitter, forever).
    public init(
        initialDelay: Duration = .milliseconds(100),
        maximumDelay: Duration = .seconds(30),
        multiplier: Double = 2,
        jitter: Double = 0.5,
        maximumAttempts: Int? = nil,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
        self.maximumAttempts = maximumAttempts
        self.random = random
    }

    /// The wait before attempt `attempt` (1 for the first) given a random number `random` in `0..<1`.
    public func delay(beforeAttempt attempt: Int, random: Double) -> Duration {
        let initial = Double(initialDelay.milliseconds)
        let maximum = Double(maximumDelay.milliseconds)
        var base = initial
        for _ in 1..<max(1, attempt) {
            base *= multiplier
            if base >= maximum { break }
        }
        base = min(base, maximum)
        let spread = min(max(jitter, 0), 1)
        let milliseconds = base * (1 - spread + spread * min(max(random, 0), 1))
        return .milliseconds(Int64(milliseconds.rounded()))
    }
}
