import HeraldCore
import HeraldStore
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// What the worker does about a failure, decided here once for every path.
enum FailureKind: Sendable, Equatable {
    /// The message is at fault: it breaks a rule, or PostgreSQL refuses its values (a data exception, a
    /// constraint). It would fail the same way every time: park it with the reason, never requeue it.
    case permanent
    /// A dependency failed (the database or the broker unreachable, a conflict, a shutdown): the same work can
    /// succeed later. Wait and try again with the message held.
    case transient

    init(_ error: any Error) {
        switch error {
        case is JobError, is SentButNotSettled, is EncodingError, is DecodingError: self = .permanent
        case let error as StoreError: self = error.isTransient ? .transient : .permanent
        default: self = .transient
        }
    }
}

/// A failure after a batch's notifications were sent: the work is not retried from the start (that would send
/// them again); the message is parked with the reason, or handed back only when the worker is shutting down.
struct SentButNotSettled: Error, CustomStringConvertible {
    let underlying: any Error
    var description: String { "sent, but the outcome could not be written: \(underlying)" }
}

/// Runs work until it succeeds, holding the message while a dependency is down.
///
/// A transient failure is tried again with jittered backoff. While the database does not answer, the wait has no
/// bound: an outage of any length is waited out, the message stays unacknowledged (so prefetch bounds how much
/// the worker holds and it takes nothing new beyond that), and nothing is requeued, so no delivery limit is spent
/// (a quorum queue counts a delivery only when a message goes back to it) and nothing is sent twice. A failure
/// that says the database could not be reached (`StoreError.isUnreachable`: the pool's circuit breaker, which
/// refuses every statement for up to a minute after a long outage ends, a failed connect, a server starting up) is
/// such an outage too, even while the outage probe, which connects on its own, already gets answers: it is tried
/// again at the backoff's pace, never counted. While the database answers, `attemptsWhileReachable` other
/// transient failures in a row end it (the error is thrown, and the caller parks the message with it): a failure
/// that repeats against a healthy database is not an outage. A permanent failure, or any failure once the worker
/// is shutting down, is thrown at once.
struct OutageWaiter: Sendable {
    /// Whether the database answers a ping within the timeout (`Store.databaseAnswers`; a fake's in tests).
    let answers: @Sendable (Duration) async -> Bool
    let logger: Logger
    /// Told of each wait during an outage (`JobEvent.waitingForDatabase`).
    var onEvent: (@Sendable (JobEvent) -> Void)? = nil
    var attemptsWhileReachable = 5
    var firstDelay: Duration = .milliseconds(200)
    var longestDelay: Duration = .seconds(5)
    var pingTimeout: Duration = .seconds(1)
    /// Time and chance: the backoff's waits and their jitter.
    var clock: HeraldClock = .system

    private static let waiting = Meter(label: "herald_outage_waits")

    init(
        store: Store, logger: Logger, onEvent: (@Sendable (JobEvent) -> Void)? = nil, clock: HeraldClock = .system
    ) {
        self.init(
            answers: { await store.databaseAnswers(within: $0) }, logger: logger, onEvent: onEvent, clock: clock)
    }

    init(
        answers: @escaping @Sendable (Duration) async -> Bool, logger: Logger,
        onEvent: (@Sendable (JobEvent) -> Void)? = nil, clock: HeraldClock = .system
    ) {
        self.answers = answers
        self.logger = logger
        self.onEvent = onEvent
        self.clock = clock
    }

    func untilDone<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        var failures = 0
        var waits = 0
        var delay = firstDelay
        while true {
            do {
                let value = try await body()
                if waits > 0 { logger.notice("database back, going on", metadata: ["operation": "\(what)"]) }
                return value
            } catch {
                guard FailureKind(error) == .transient, !Task.isCancelled, !Task.isShuttingDownGracefully else {
                    throw error
                }
                let unreachable = Self.isUnreachable(error)
                let answers = await databaseAnswers()
                if answers && !unreachable {
                    failures += 1
                    guard failures < attemptsWhileReachable else { throw error }
                    logger.warning(
                        "transient failure, trying again",
                        metadata: ["operation": "\(what)", "attempt": "\(failures)", "error": "\(error)"])
                    try? await clock.sleep(delay * clock.random(0.5...1))
                    delay = min(delay * 2, longestDelay)
                    continue
                }
                // An outage: wait (without trying the work, so nothing piles up on the pool) until the database
                // answers again, then try once more. The database may answer while the pool still refuses: then
                // the work is tried again after one wait, at the delay reached so far.
                failures = 0
                if waits == 0 {
                    logger.warning(
                        "database unreachable, holding the message until it is back",
                        metadata: ["operation": "\(what)", "error": "\(error)"])
                }
                Self.waiting.increment(by: 1)
                defer { Self.waiting.decrement(by: 1) }
                repeat {
                    waits += 1
                    onEvent?(.waitingForDatabase(operation: what, wait: waits))
                    if waits.nonzeroBitCount == 1 {  // 1, 2, 4, 8, …: a line now and then, not one per wait
                        logger.notice(
                            "still waiting for the database",
                            metadata: ["operation": "\(what)", "waits": "\(waits)", "error": "\(error)"])
                    }
                    try? await clock.sleep(delay * clock.random(0.5...1))
                    delay = min(delay * 2, longestDelay)
                    if Task.isCancelled || Task.isShuttingDownGracefully { throw error }
                } while await !databaseAnswers()
                if !answers {
                    logger.notice("database answers again, trying again", metadata: ["operation": "\(what)"])
                    delay = firstDelay
                }
            }
        }
    }

    /// Whether `error` says the database could not be reached, whatever the probe says (`StoreError.isUnreachable`).
    static func isUnreachable(_ error: any Error) -> Bool {
        (error as? StoreError)?.isUnreachable ?? false
    }
}

extension OutageWaiter {
    /// Whether the database answers a ping within `pingTimeout`.
    func databaseAnswers() async -> Bool { await answers(pingTimeout) }
}

extension FailureKind {
    /// Whether a failed message goes back to its queue rather than to the parking queue: only a transient failure
    /// while the worker shuts down (another worker takes it up). Anything else that failed for good is parked
    /// with its reason: requeueing it would only repeat the failure.
    static func handBack(_ error: any Error) -> Bool {
        FailureKind(error) == .transient && isStopping
    }

    /// Whether the worker is draining (or the task cancelled): a loop that waits for something outside stops then,
    /// so that its message is handed back to the queue rather than held past the drain.
    static var isStopping: Bool { Task.isShuttingDownGracefully || Task.isCancelled }
}
