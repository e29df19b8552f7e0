import Foundation
import HeraldCore
import Synchronization

/// A clock tests move by hand: wall-clock seconds since 1970 (for the provider token cache and the simulator,
/// `now`), a monotonic instant, and sleepers that wake only when `advance` moves time past their deadline. Its
/// `clock` is the `HeraldClock` to inject, with `random` fixed at `randomValue`'s place in each range.
public final class MockClock: Sendable {
    private struct Sleeper {
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        /// Time moved since the start.
        var elapsed: Duration = .zero
        var sleepers: [UInt64: Sleeper] = [:]
        var nextSleeper: UInt64 = 0
        /// Sleepers cancelled before they were registered.
        var cancelled: Set<UInt64> = []
    }

    private let start: Int64
    private let origin = ContinuousClock.now
    private let state = Mutex(State())
    /// Where each random draw falls in its range, 0 (the bottom) to 1 (the top).
    public let randomValue: Double

    public init(_ start: Int64 = 1_800_000_000, randomValue: Double = 1) {
        self.start = start
        self.randomValue = randomValue
    }

    /// Wall-clock time in whole seconds since 1970.
    public var now: Int64 { start + state.withLock { $0.elapsed.components.seconds } }

    /// Time moved since the start.
    public var elapsed: Duration { state.withLock { $0.elapsed } }

    /// Moves time on by whole seconds.
    public func advance(bySeconds seconds: Int64) { advance(by: .seconds(seconds)) }

    /// Moves time on, waking every sleeper whose deadline it reaches.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.elapsed += duration
            let due = state.sleepers.filter { $0.value.deadline <= state.elapsed }
            for key in due.keys { state.sleepers[key] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// The `HeraldClock` to inject.
    public var clock: HeraldClock {
        HeraldClock(
            unixTime: { [self] in
                let elapsed = self.elapsed
                return Double(start) + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds)
                    / 1e18
            },
            now: { [self] in origin + elapsed },
            sleep: { [self] duration in try await sleep(duration) },
            random: { [randomValue] range in range.lowerBound + (range.upperBound - range.lowerBound) * randomValue })
    }

    /// A `HeraldClock` whose waits move this clock on by their length and return at once: a run of backoffs takes
    /// no time, and `elapsed` says how long it would have waited.
    public var skipping: HeraldClock {
        var clock = self.clock
        clock.sleep = { [self] duration in
            try Task.checkCancellation()
            if duration > .zero { advance(by: duration) }
        }
        return clock
    }

    /// Sleeps until time has moved on by `duration` from now (at once for none).
    public func sleep(_ duration: Duration) async throws {
        guard duration > .zero else { return }
        let id = state.withLock { state -> UInt64 in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return true }
                    state.sleepers[id] = Sleeper(deadline: state.elapsed + duration, continuation: continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
