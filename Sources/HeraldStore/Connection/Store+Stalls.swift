import HeraldCore
import Logging
import PostgresNIO
import Synchronization

/// When a statement caught in an outage is taken for lost (`Store.abandoningIfStalled`).
public struct StallPolicy: Sendable, Hashable {
    /// How often a running statement checks on the database.
    public var checkInterval: Duration
    /// How long the database may go unanswering under a running statement, or must have answered again after an
    /// outage with the statement still running, before the statement is taken for lost.
    public var grace: Duration

    public init(checkInterval: Duration = .seconds(5), grace: Duration = .seconds(15)) {
        self.checkInterval = checkInterval
        self.grace = grace
    }
}

extension Store {
    /// Runs `body`, giving up on it if it is caught in an outage:
    /// - PostgresNIO (1.33) can leave a statement waiting for ever when the server closes its connection in the
    ///   middle of a transaction (seen with a `pg_ctl stop` under load). Such a statement would hold its caller, and
    ///   the message it serves, for ever.
    /// - While the server is down, the pool keeps a statement waiting for a connection until its circuit breaker
    ///   trips, 60 s after the first failed connect: the caller would not know of the outage for a minute.
    ///
    /// While `body` runs longer than `stalls.checkInterval`, the database is pinged at that interval. `body` is
    /// abandoned (its task cancelled, and left to finish or hang on its own) and a transient `StoreError` is thrown,
    /// which the worker treats like any other lost connection, when pings have failed for `stalls.grace`, or when a
    /// ping failed while `body` ran and pings have answered again for `stalls.grace` with `body` still running. A
    /// statement that runs long without an outage is never abandoned. A body that does more than run statements
    /// checks for cancellation before each step that must not happen once its caller has moved on.
    func abandoningIfStalled<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = StallOutcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.start(continuation)
                // Where the caller prefers to run: the body's decoding and bookkeeping are the caller's work.
                let work = Task(executorPreference: ExecutorPreference.current) {
                    do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
                }
                let watchdog = Task { [self] in
                    @Sendable func giveUp(_ line: Logger.Message, _ reason: String, unreachable: Bool) {
                        logger.warning(line, metadata: ["operation": "\(what)"])
                        var error = StoreError(.queryFailed, "\(what) failed: \(reason)")
                        error.isUnreachable = unreachable
                        outcome.finish(.failure(error))
                        work.cancel()
                    }
                    // Whether pings answer, and since when; nil until the first failed ping (a statement that runs
                    // long without an outage is left alone).
                    var state: (answers: Bool, since: ContinuousClock.Instant)? = nil
                    while !Task.isCancelled {
                        try? await clock.sleep(stalls.checkInterval)
                        guard !Task.isCancelled, !outcome.isFinished else { return }
                        let answers = await databaseAnswers(within: .seconds(1))
                        // A server that refuses connections (a wrong password, a dropped database) will not take
                        // this statement's either: its own error, at once, rather than the pool's in a minute.
                        if let refusal = DatabaseProbe.shared(for: self).refusal {
                            logger.warning(
                                "the database refuses connections, giving up on a statement",
                                metadata: ["operation": "\(what)", "reason": "\(refusal.message)"])
                            outcome.finish(.failure(refusal))
                            work.cancel()
                            return
                        }
                        guard state != nil || !answers else { continue }
                        let now = clock.now()
                        if state?.answers != answers { state = (answers, now) }
                        guard let since = state?.since, since.duration(to: now) >= stalls.grace else { continue }
                        if answers {
                            giveUp(
                                "a statement lost with its connection, giving up on it",
                                "the connection was lost under it", unreachable: false)
                        } else {
                            giveUp(
                                "the database does not answer, giving up on a statement",
                                "the database does not answer", unreachable: true)
                        }
                        return
                    }
                }
                outcome.onFinish { watchdog.cancel() }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// Whether the database answers a ping within `timeout` (`DatabaseProbe`).
    public func databaseAnswers(within timeout: Duration) async -> Bool {
        await DatabaseProbe.shared(for: self).answers(within: timeout)
    }
}

/// The one result of a statement run by `abandoningIfStalled`: the statement's, or the watchdog's, whichever
/// comes first.
private final class StallOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var onFinish: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    var isFinished: Bool { state.withLock { $0.result != nil } }

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            if state.result != nil { return true }
            state.onFinish = action
            return false
        }
        if finished { action() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, action) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard state.result == nil else { return (nil, nil) }
            state.result = result
            defer { (state.continuation, state.onFinish) = (nil, nil) }
            return (state.continuation, state.onFinish)
        }
        continuation?.resume(with: result)
        action?()
    }
}

/// Pings the database for every caller of a pool at once: a ping started less than a timeout ago is shared, and a
/// caller stops waiting for it after its timeout without cancelling it. While the server is down the pool keeps a
/// lease waiting for a connection rather than failing it, so pings are outwaited, and an old one is not waited on
/// again.
final class DatabaseProbe: Sendable {
    private let store: Store
    private let inFlight = Mutex<(ping: Task<Bool, Never>, started: ContinuousClock.Instant)?>(nil)
    private let lastRefusal = Mutex<StoreError?>(nil)
    private static let probes = Mutex<[ObjectIdentifier: DatabaseProbe]>([:])

    private init(store: Store) { self.store = store }

    /// How PostgreSQL refused the last ping's connection (`Store.isRefusal`), if it did; nil once one opens.
    var refusal: StoreError? { lastRefusal.withLock { $0 } }

    /// The probe of `store`'s pool.
    static func shared(for store: Store) -> DatabaseProbe {
        probes.withLock { probes in
            let key = ObjectIdentifier(store.client)
            if let probe = probes[key] { return probe }
            let probe = DatabaseProbe(store: store)
            probes[key] = probe
            return probe
        }
    }

    func answers(within timeout: Duration) async -> Bool {
        let clock = store.clock
        let now = clock.now()
        let ping = inFlight.withLock { current in
            if let current, current.started.duration(to: now) < timeout { return current.ping }
            let task = Task { [self] in await self.ping() }
            current = (task, now)
            return task
        }
        let first = FirstAnswer()
        return await withCheckedContinuation { continuation in
            Task { first.give(await ping.value, to: continuation) }
            Task {
                try? await clock.sleep(timeout)
                first.give(false, to: continuation)
            }
        }
    }

    /// One ping: `SELECT 1` on a connection of its own (`Store.probeConnection`), or through the pool. A server
    /// that answers with an error (too many connections, shutting down) is up: its connections are not, and the
    /// statements will say so themselves.
    private func ping() async -> Bool {
        guard let configuration = store.probeConnection else {
            return (try? await store.client.query("SELECT 1", logger: store.logger)) != nil
        }
        do {
            let connection = try await PostgresConnection.connect(
                configuration: configuration, id: Self.probeConnectionIDs.wrappingAdd(1, ordering: .relaxed).newValue,
                logger: store.logger)
            defer { Task { try? await connection.close() } }
            lastRefusal.withLock { $0 = nil }
            try await connection.query("SELECT 1", logger: store.logger)
            return true
        } catch let error as PSQLError where error.serverInfo != nil {
            let refusal = Store.refusal(error, host: configuration.host ?? "the database", port: configuration.port)
            if let refusal { lastRefusal.withLock { $0 = refusal } }
            return true
        } catch {
            return false
        }
    }

    private static let probeConnectionIDs = Atomic(0)

    /// Resumes a continuation with the first answer given, once.
    private final class FirstAnswer: Sendable {
        private let given = Atomic(false)

        func give(_ answer: Bool, to continuation: CheckedContinuation<Bool, Never>) {
            if !given.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume(returning: answer) }
        }
    }
}
