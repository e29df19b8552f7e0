import HeraldCore
import Logging
import PostgresNIO
import _ConnectionPoolModule

/// Herald's PostgreSQL store: devices, jobs, write-back and reports, over one `PostgresClient` pool.
///
/// The pool must be running (`client.run()` in a task or as a `Service`) while the store is used.
public struct Store: Sendable {
    /// The pool.
    package let client: PostgresClient
    /// The logger of every query (`package`: the bench's queries extend the store from HeraldBench).
    package let logger: Logger
    /// When a statement that outlived an outage is given up on.
    public let stalls: StallPolicy
    /// Where the outage probe (`databaseAnswers`) connects; nil pings through the pool.
    let probeConnection: PostgresConnection.Configuration?
    /// Time for the stall watchdog and the outage probe's waits.
    public let clock: HeraldClock
    /// `herald_jobs_finished_total`, counted from what `herald_end_jobs` ends.
    public let metrics: StoreMetrics

    /// - Parameter probeConnection: the server, for the outage probe's own connections. With it, a ping opens a
    ///   connection of its own, so a down server is seen at once (a lease from the pool waits for PostgresNIO's
    ///   60 s circuit breaker) and a pool busy with long statements never looks like an outage. Without it, pings
    ///   go through the pool.
    public init(
        client: PostgresClient, logger: Logger, stalls: StallPolicy = StallPolicy(),
        probeConnection: PostgresConnection.Configuration? = nil, clock: HeraldClock = .system,
        metrics: StoreMetrics = StoreMetrics()
    ) {
        self.client = client
        self.logger = logger
        self.stalls = stalls
        self.probeConnection = probeConnection
        self.clock = clock
        self.metrics = metrics
    }

    /// Runs `body`, turning any PostgreSQL error into a `StoreError` that is safe to log.
    @discardableResult
    package func run<T: Sendable>(
        _ what: String,
        code: StoreError.Code = .queryFailed,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws(StoreError) -> T {
        do {
            // A transaction PostgreSQL aborted for a deadlock or a serialization failure did nothing: run it again
            // (a few times) rather than hand the batch back to the queue and send it twice.
            var attempt = 1
            while true {
                do {
                    return try await abandoningIfStalled(what, body)
                } catch  where attempt < 4 && Self.isTransientConflict(error) {
                    logger.debug("transaction conflict, retrying", metadata: ["operation": "\(what)"])
                    attempt += 1
                }
            }
        } catch {
            throw Self.storeError(error, what: what, code: code)
        }
    }
}

extension Store {
    /// `error` as a `StoreError` that is safe to log: PostgreSQL's message and SQLSTATE, never bound values.
    package static func storeError(
        _ error: any Error, what: String, code: StoreError.Code = .queryFailed
    ) -> StoreError {
        if let error = error as? StoreError { return error }
        if let transaction = error as? PostgresTransactionError {
            // The first failure is the cause; a rollback error after it says nothing more.
            if let cause = transaction.beginError ?? transaction.closureError ?? transaction.commitError {
                return storeError(cause, what: what, code: code)
            }
        }
        if let error = error as? PSQLError {
            let sqlState = error.serverInfo?[.sqlState]
            let server = error.serverInfo?[.message].map { ": \($0)" } ?? ""
            var stored = StoreError(
                code, "\(what) failed\(server)\(sqlState.map { " [\($0)]" } ?? "")", underlying: error)
            stored.sqlState = sqlState
            stored.isTransient = sqlState.map(StoreError.isTransient(sqlState:)) ?? isTransient(clientError: error)
            stored.isUnreachable =
                sqlState.map(StoreError.isUnreachable(sqlState:)) ?? isUnreachable(clientError: error)
            return stored
        }
        var stored = StoreError(code, "\(what) failed", underlying: error)
        // The pool's refusals reach us as they are: only its circuit breaker says the server is out of reach (not a
        // cancelled request, nor a pool shut down).
        stored.isUnreachable = error as? ConnectionPoolError == .connectionCreationCircuitBreakerTripped
        // A row that does not decode as its type, or a value that cannot be bound, fails the same way again.
        stored.isTransient = !(error is DecodingError || error is EncodingError || error is PostgresDecodingError)
        return stored
    }

    /// A failure with no answer from the server: the connection (lost, refused, closed, the pool shutting down) can
    /// come back; a statement with too many parameters or a message that does not decode cannot.
    private static func isTransient(clientError error: PSQLError) -> Bool {
        switch error.code {
        case .tooManyParameters, .messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag,
            .unsupportedAuthMechanism, .authMechanismRequiresPassword:
            return false
        default:
            return true
        }
    }

    /// A failure with no answer from the server that says the server could not be reached: no connection could be
    /// made, or it failed. A connection the server closed under a statement is not: the statement may be why (a
    /// backend that crashed on it), so it is tried a bounded number of times while the server answers.
    private static func isUnreachable(clientError error: PSQLError) -> Bool {
        error.code == .connectionError
    }

    /// Deadlock (40P01) or serialization failure (40001), directly or inside a failed transaction.
    static func isTransientConflict(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError {
            return [transaction.beginError, transaction.closureError, transaction.commitError]
                .contains { $0.map(isTransientConflict) ?? false }
        }
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// Runs `body` with a store over `configuration` whose connection pool runs for exactly the duration of `body`.
    /// For commands and tests; long-running processes run the `PostgresClient` as a `Service` instead.
    ///
    /// A server that refuses the connection for a reason waiting does not cure (a wrong password, a database that
    /// does not exist: `connectionRefusal`) fails at once with PostgreSQL's own error, before `body` runs.
    public static func withStore<T: Sendable>(
        _ configuration: DatabaseConfiguration,
        logger: Logger,
        _ body: (Store) async throws -> T
    ) async throws -> T {
        if let probe = try? configuration.connectionConfiguration(),
            let refusal = await connectionRefusal(probe, logger: logger)
        {
            throw refusal
        }
        let client = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(
                Store(client: client, logger: logger, probeConnection: try? configuration.connectionConfiguration()))
        }
    }
}

extension Store {
    /// A round trip to the database, for readiness checks.
    public func ping() async throws(StoreError) {
        try await run("pinging the database") {
            try await client.query("SELECT 1", logger: logger)
        }
    }
}
