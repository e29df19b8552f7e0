import Logging
import PostgresNIO

/// Herald's PostgreSQL store: devices, jobs, write-back and reports, over one `PostgresClient` pool.
///
/// The pool must be running (`client.run()` in a task or as a `Service`) while the store is used.
public struct Store: Sendable {
    /// The pool.
    public let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Runs `body`, turning any PostgreSQL error into a `StoreError` that is safe to log.
    @discardableResult
    func run<T>(
        _ what: String,
        code: StoreError.Code = .queryFailed,
        _ body: () async throws -> T
    ) async throws(StoreError) -> T {
        do {
            // A transaction PostgreSQL aborted for a deadlock or a serialization failure did nothing: run it again
            // (a few times) rather than hand the batch back to the queue and send it twice.
            var attempt = 1
            while true {
                do {
                    return try await body()
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
    static func storeError(_ error: any Error, what: String, code: StoreError.Code = .queryFailed) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            let server = error.serverInfo?[.message].map { ": \($0)" } ?? ""
            let state = error.serverInfo?[.sqlState].map { " [\($0)]" } ?? ""
            return StoreError(code, "\(what) failed\(server)\(state)", underlying: error)
        }
        return StoreError(code, "\(what) failed", underlying: error)
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
    public static func withStore<T: Sendable>(
        _ configuration: DatabaseConfiguration,
        logger: Logger,
        _ body: (Store) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(Store(client: client, logger: logger))
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
