import _ConnectionPoolModule

/// A failure of the store: a code, a message safe to log (never a password, token or row content), and the cause.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public static let invalidURL = Code(rawValue: "invalid_url")
        public static let migrationFailed = Code(rawValue: "migration_failed")
        public static let importFailed = Code(rawValue: "import_failed")
        public static let queryFailed = Code(rawValue: "query_failed")
        /// A register-only API key tried to change a device it did not register.
        public static let notOwnDevice = Code(rawValue: "not_own_device")
        /// A register-only API key is over one of its quotas (`retryAfter` says when it may try again, if it will).
        public static let quotaExceeded = Code(rawValue: "quota_exceeded")
        /// A registration would change the platform (or the FCM kind) of a registered token: a device keeps its
        /// platform, and the message names the field and the platform it has.
        public static let platformConflict = Code(rawValue: "platform_conflict")
        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    /// PostgreSQL's SQLSTATE, when the server answered with an error.
    public var sqlState: String?
    /// Whether the same statement may succeed later: false only when the values it carried are at fault (a data
    /// exception, a constraint violation, a function that raised), which fails the same way every time and is the
    /// message's fault; true when the database is unreachable, shutting down, out of resources or in conflict,
    /// and also when it is misconfigured (authentication, a missing table or permission): that is an outage of
    /// the deployment, not something to park messages for.
    public var isTransient: Bool = true
    /// Whether the statement never reached a server that could run it: the pool could not connect (its circuit
    /// breaker, open after a minute of failed connects, refuses every statement at once until its own next try, up to
    /// a minute after the server is back), a connection could not be made or was lost under the statement, or the
    /// server was shutting down or starting up. An outage, whatever a probe of the server says at that moment: the
    /// worker waits it out without counting it as a try of the work (`OutageWaiter`).
    public var isUnreachable: Bool = false
    /// The underlying error's type, not its text: PostgresNIO's errors can quote bound values.
    public var underlying: (any Error)?
    /// For `quotaExceeded`: whole seconds until the quota allows the call again; nil if waiting does not help.
    public var retryAfter: Int? = nil
    public var file: String
    public var line: Int

    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// Whether the database could not be used at all: not reached, lost, shutting down, out of connection slots,
    /// or refusing the connection (`Store.isRefusal`). The API answers these 503 with `Retry-After`, not 500.
    public var isUnavailable: Bool {
        guard isTransient, code == .queryFailed else { return false }
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState == "53300"
            || Store.isRefusal(sqlState: sqlState)
    }

    /// An error the same call would meet every time (its values are at fault): never retried.
    public static func permanent(_ code: Code, _ message: String) -> StoreError {
        var error = StoreError(code, message)
        error.isTransient = false
        return error
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let underlying { text += " (\(Self.summary(of: underlying)))" }
        return text
    }

    /// Whether a SQLSTATE leaves the same statement a chance: every class but 22 (data exception: a value out of
    /// range, a date that does not exist, text PostgreSQL cannot store), 23 (integrity constraint violation) and
    /// P0 (raised by a PL/pgSQL function).
    public static func isTransient(sqlState: String) -> Bool {
        !["22", "23", "P0"].contains(String(sqlState.prefix(2)))
    }

    /// Whether a SQLSTATE says the server could not be used rather than that the statement failed: class 08
    /// (connection exception) and 57P01-57P03 (shut down by the administrator, crash shutdown, cannot connect now:
    /// starting up).
    public static func isUnreachable(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// A one-line summary of a cause that cannot leak bound values: PSQLError's server message and SQLSTATE only.
    static func summary(of error: any Error) -> String {
        if error as? ConnectionPoolError == .connectionCreationCircuitBreakerTripped {
            return "ConnectionPoolError: the pool's circuit breaker is open"
        }
        return String(describing: type(of: error))
    }
}
