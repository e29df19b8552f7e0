import Foundation

/// Time and chance, injected: the one type through which the worker's stages read the clocks, wait and draw random
/// numbers. `.system` is the machine's; tests pass `MockClock.clock` (HeraldTestSupport), whose time moves only
/// when the test moves it and whose draws are fixed, so a run of retries, waits and expiries is fast and exact.
public struct HeraldClock: Sendable {
    /// Wall-clock time, seconds since 1970: what is compared with times from outside (an expiration, a publish
    /// time, a token's expiry) or stored.
    public var unixTime: @Sendable () -> Double
    /// A monotonic instant: what waits and durations are measured on.
    public var now: @Sendable () -> ContinuousClock.Instant
    /// Waits `duration` (throws when the task is cancelled).
    public var sleep: @Sendable (Duration) async throws -> Void
    /// A random number in the range: jitter of backoffs.
    public var random: @Sendable (ClosedRange<Double>) -> Double

    public init(
        unixTime: @escaping @Sendable () -> Double,
        now: @escaping @Sendable () -> ContinuousClock.Instant,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double
    ) {
        self.unixTime = unixTime
        self.now = now
        self.sleep = sleep
        self.random = random
    }

    /// The machine's clocks, `Task.sleep` and the system's random numbers.
    public static let system = HeraldClock(
        unixTime: { Date().timeIntervalSince1970 },
        now: { ContinuousClock.now },
        sleep: { try await Task.sleep(for: $0) },
        random: { Double.random(in: $0) })

    /// Wall-clock time in whole seconds since 1970.
    public var unixSeconds: Int64 { Int64(unixTime()) }

    /// Wall-clock time in milliseconds since 1970.
    public var unixMilliseconds: Int64 { Int64(unixTime() * 1000) }

    /// Wall-clock time as a `Date`, for the APIs that take one.
    public var date: Date { Date(timeIntervalSince1970: unixTime()) }

    /// Waits until `deadline` on the monotonic clock; returns at once if it has passed.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let left = now().duration(to: deadline)
        if left > .zero { try await sleep(left) }
    }
}
