import HeraldCore
import Logging
import PostgresNIO
import Synchronization

/// Makes the planning of one job exclusive across every worker, so that concurrent copies of a job message (a
/// producer publishing an id twice, a redelivery racing a live planner) plan — and so send — once.
///
/// A claim is a session-level advisory lock on the job's (app, id), held on a connection of its own (outside the
/// pool: a session lock must be released on the session that took it) for as long as the job is being planned.
/// A worker that dies loses its session, and PostgreSQL releases its locks: the job's redelivered message claims
/// it again and resumes from the plan cursor. TCP keepalives on that connection bound how long a vanished worker's
/// session (no FIN: a host lost, a partition) keeps its locks: about 25 s.
///
/// Within one process, the claims held are also tracked, since a session may take its own lock again. If the
/// connection itself is lost while the database stays up, the locks it held are gone while their planners go on
/// (until their own queries fail): a copy arriving then may plan alongside. The next claim connects again.
public final class PlanningClaims: Sendable {
    /// The lock space: "PLAN". The lock is the 64-bit `herald_job_lock_key(space, app, id)` (schemas/027).
    static let lockSpace: Int32 = 0x504C_414E

    private struct State {
        var held: Set<JobKey> = []
        var connection: PostgresConnection?
        var closed = false
    }

    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let state = Mutex(State())
    /// One connect at a time; queries themselves are pipelined on the connection.
    private let connecting = Mutex<Task<PostgresConnection, any Error>?>(nil)
    private let connectionIDs = Atomic(0)

    /// Time for the waits of a claim held elsewhere.
    private let clock: HeraldClock

    public init(database: DatabaseConfiguration, logger: Logger, clock: HeraldClock = .system) throws(StoreError) {
        var configuration = try database.connectionConfiguration()
        configuration.options.additionalStartupParameters = [
            ("application_name", "herald-planning-claims"),
            ("tcp_keepalives_idle", "10"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
        ]
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
    }

    /// Runs `body` while holding the planning claim of `job`, then releases it (whether `body` returns or throws).
    /// Returns nil without running `body` if another live planner holds the claim.
    ///
    /// - Parameter wait: how long to keep trying while the claim is held (for a redelivered message, whose planner
    ///   may have died a moment ago without PostgreSQL knowing yet, or, in this process, may still fail after its
    ///   own copy came back through a broker reconnection); zero tries once.
    public func withClaim<T: Sendable>(
        on job: JobKey,
        wait: Duration = .zero,
        _ body: () async throws -> T
    ) async throws -> T? {
        guard try await acquire(job, wait: wait) else { return nil }
        do {
            let value = try await body()
            await release(job)
            return value
        } catch {
            await release(job)
            throw error
        }
    }

    /// Closes the connection: every claim still held is released. Claims asked for afterwards fail.
    public func close() async {
        let connection = state.withLock { state in
            state.closed = true
            defer { state.connection = nil }
            return state.connection
        }
        try? await connection?.close()
    }

    private func acquire(_ job: JobKey, wait: Duration) async throws -> Bool {
        let deadline = clock.now() + wait
        while true {
            // A claim this process holds is not asked of PostgreSQL again: a session may take its own lock twice.
            if state.withLock({ $0.held.insert(job).inserted }) {
                let locked: Bool
                do {
                    locked = try await tryLock(job)
                } catch {
                    _ = state.withLock { $0.held.remove(job) }
                    throw Store.storeError(error, what: "claiming a job for planning")
                }
                if locked { return true }
                _ = state.withLock { $0.held.remove(job) }
            }
            guard clock.now() < deadline else { return false }
            try await clock.sleep(.milliseconds(200))
        }
    }

    private func tryLock(_ job: JobKey) async throws -> Bool {
        let connection = try await connection()
        let rows = try await connection.query(
            "SELECT pg_try_advisory_lock(herald_job_lock_key(\(Self.lockSpace), \(job.app), \(job.id)))",
            logger: logger)
        for try await locked in rows.decode(Bool.self) { return locked }
        return false
    }

    private func release(_ job: JobKey) async {
        defer { _ = state.withLock { $0.held.remove(job) } }
        guard let connection = state.withLock({ $0.connection }), !connection.isClosed else {
            return  // the session is gone, and its locks with it
        }
        do {
            try await connection.query(
                "SELECT pg_advisory_unlock(herald_job_lock_key(\(Self.lockSpace), \(job.app), \(job.id)))",
                logger: logger)
        } catch {
            // The session must not keep a claim nobody plans under: drop it, and every lock with it. Other claims
            // of this process stay exclusive within it, and it connects again for the next claim.
            logger.warning(
                "releasing a planning claim failed, closing its connection",
                metadata: ["error": "\(Store.storeError(error, what: "releasing a planning claim"))"])
            state.withLock { if $0.connection === connection { $0.connection = nil } }
            try? await connection.close()
        }
    }

    private func connection() async throws -> PostgresConnection {
        let current = try state.withLock { state throws(StoreError) -> PostgresConnection? in
            if state.closed { throw StoreError(.queryFailed, "planning claims are closed") }
            return state.connection
        }
        if let current, !current.isClosed { return current }
        let task = connecting.withLock { task in
            if let task { return task }
            let configuration = self.configuration
            let logger = self.logger
            let id = connectionIDs.add(1, ordering: .relaxed).newValue
            let started = Task {
                try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
            }
            task = started
            return started
        }
        defer { connecting.withLock { if $0 == task { $0 = nil } } }
        let fresh = try await task.value
        let chosen = state.withLock { state -> PostgresConnection? in
            if state.closed { return nil }
            if let existing = state.connection, !existing.isClosed { return existing }
            state.connection = fresh
            return fresh
        }
        guard let chosen else {
            try? await fresh.close()
            throw StoreError(.queryFailed, "planning claims are closed")
        }
        if chosen !== fresh { try? await fresh.close() }
        return chosen
    }
}
