import Logging
import PostgresNIO
import Synchronization

extension Store {
    /// SQLSTATEs with which PostgreSQL refuses a connection for a reason that waiting does not cure: authentication
    /// (class 28: a wrong password, no pg_hba.conf entry), a database that does not exist (3D000), no CONNECT
    /// privilege (42501). The pool would retry them until its circuit breaker trips, a minute later, and then report
    /// only that it gave up; Herald reports PostgreSQL's own error at once instead.
    static func isRefusal(sqlState: String) -> Bool {
        sqlState.hasPrefix("28") || sqlState == "3D000" || sqlState == "42501"
    }

    /// PostgreSQL's refusal of a connection to `configuration`, as a `StoreError` naming the server's message and
    /// SQLSTATE (never the password); nil when the connection opens, or fails for another reason (a server that is
    /// down or starting is waited for as before).
    public static func connectionRefusal(
        _ configuration: PostgresConnection.Configuration, logger: Logger
    ) async -> StoreError? {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: configuration, id: refusalConnectionIDs.wrappingAdd(1, ordering: .relaxed).newValue,
                logger: logger)
            try? await connection.close()
            return nil
        } catch {
            return refusal(error, host: configuration.host ?? "the database", port: configuration.port)
        }
    }

    /// `error` as a refusal, if PostgreSQL refused the connection for a reason that waiting does not cure.
    static func refusal(_ error: any Error, host: String, port: Int?) -> StoreError? {
        guard let psql = error as? PSQLError, let state = psql.serverInfo?[.sqlState], isRefusal(sqlState: state)
        else { return nil }
        let place = host + (port.map { ":\($0)" } ?? "")
        var refused = StoreError(
            .queryFailed,
            "PostgreSQL at \(place) refused the connection: \(psql.serverInfo?[.message] ?? "an error") [\(state)]"
                + (state.hasPrefix("28")
                    ? " (check the user and password in the database URL)"
                    : state == "3D000" ? " (check the database name in the database URL, or run createdb)" : ""),
            underlying: error)
        refused.sqlState = state
        return refused
    }

    private static let refusalConnectionIDs = Atomic(0)
}
