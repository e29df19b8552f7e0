import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldWorker

/// What `OutageWaiter` does with each kind of failure while its probe of the database answers or does not: an
/// outage is waited out however long it lasts, a failure against a healthy database ends after a few tries. No
/// services: the probe and the work are fakes, and the clock is a mock whose waits take no time.
@Suite struct OutageWaiterTests {
    /// A waiter whose probe answers as `answers` says, on `clock` (its waits skipped), telling `sink` of its waits.
    static func waiter(
        answers: @escaping @Sendable () -> Bool, sink: EventSink = EventSink(), clock: MockClock = MockClock()
    ) -> OutageWaiter {
        OutageWaiter(
            answers: { _ in answers() }, logger: Logger(label: "test"), onEvent: { sink.add($0) },
            clock: clock.skipping)
    }

    /// The waits double from 200 ms to at most 5 s, each drawn between half and all of its delay.
    @Test func theWaitsDoubleUpToFiveSecondsWithJitter() async throws {
        for (draw, expected) in [
            (1.0, 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5), (0.0, (0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5) / 2),
        ] {
            let clock = MockClock(randomValue: draw)
            let waiter = Self.waiter(answers: { true }, clock: clock)
            let work = FailingWork(failing: 7, with: Self.circuitBreaker)
            #expect(try await waiter.untilDone("completing a batch") { try work.run() } == 8)
            #expect(clock.elapsed == .milliseconds(Int64((expected * 1000).rounded())))
        }
    }

    final class EventSink: Sendable {
        let events = Mutex<[JobEvent]>([])
        func add(_ event: JobEvent) { events.withLock { $0.append(event) } }
    }

    /// Fails `count` times with `error`, then returns the number of tries.
    final class FailingWork: Sendable {
        let tries = Atomic(0)
        let count: Int
        let error: StoreError

        init(failing count: Int, with error: StoreError) {
            self.count = count
            self.error = error
        }

        func run() throws -> Int {
            let tried = tries.wrappingAdd(1, ordering: .relaxed).newValue
            if tried <= count { throw error }
            return tried
        }
    }

    static var circuitBreaker: StoreError {
        var error = StoreError(.queryFailed, "registering a job failed")
        error.isUnreachable = true
        return error
    }

    /// After an outage of more than a minute, PostgresNIO's pool refuses every statement at once (its circuit
    /// breaker) until its own next connect, up to a minute after the server is back, while the probe, which connects
    /// on its own, already gets answers: that is still the outage, waited out however many tries it takes, never
    /// the end of the message (issue 32: 1,297 jobs parked `failed_repeatedly` after a 120 s stop).
    @Test func aPoolThatStillRefusesAfterTheServerIsBackIsWaitedOut() async throws {
        let work = FailingWork(failing: 40, with: Self.circuitBreaker)
        let waiter = Self.waiter(answers: { true })
        let tries = try await waiter.untilDone("registering a job") { try work.run() }
        #expect(tries == 41)
        #expect(tries > waiter.attemptsWhileReachable)
    }

    /// Each wait on a pool that refuses is told (`waitingForDatabase`), numbered on across the waits.
    @Test func eachWaitOnARefusingPoolIsAnEvent() async throws {
        let sink = EventSink()
        let waiter = Self.waiter(answers: { true }, sink: sink)
        let work = FailingWork(failing: 7, with: Self.circuitBreaker)
        _ = try await waiter.untilDone("completing a batch") { try work.run() }
        let waits = sink.events.withLock { $0 }.compactMap { event -> Int? in
            if case .waitingForDatabase("completing a batch", let wait) = event { wait } else { nil }
        }
        #expect(waits == Array(1...7))
    }

    /// A transient failure while the database answers, and nothing says it is unreachable, ends after
    /// `attemptsWhileReachable` tries: it is not an outage.
    @Test func aTransientFailureAgainstAHealthyDatabaseEndsAfterAFewTries() async throws {
        let work = FailingWork(failing: 100, with: StoreError(.queryFailed, "registering a job failed"))
        let waiter = Self.waiter(answers: { true })
        await #expect(throws: StoreError.self) {
            _ = try await waiter.untilDone("registering a job") { try work.run() }
        }
        #expect(work.tries.load(ordering: .relaxed) == waiter.attemptsWhileReachable)
    }

    /// While the probe gets no answer, any transient failure is held, and the work is tried again only once the
    /// probe answers.
    @Test func anOutageIsWaitedOutUntilTheProbeAnswers() async throws {
        let pings = Atomic(0)
        let waiter = Self.waiter(answers: { pings.wrappingAdd(1, ordering: .relaxed).newValue > 30 })
        let work = FailingWork(failing: 1, with: StoreError(.queryFailed, "planning a job failed"))
        let tries = try await waiter.untilDone("planning a job") { try work.run() }
        #expect(tries == 2)
        #expect(pings.load(ordering: .relaxed) > 30)
    }

    /// A permanent failure (the values are at fault) is thrown at once, outage or not.
    @Test func aPermanentFailureIsThrownAtOnce() async throws {
        let work = FailingWork(failing: 1, with: .permanent(.queryFailed, "a value out of range"))
        let waiter = Self.waiter(answers: { false })
        await #expect(throws: StoreError.self) {
            _ = try await waiter.untilDone("registering a job") { try work.run() }
        }
        #expect(work.tries.load(ordering: .relaxed) == 1)
    }
}
