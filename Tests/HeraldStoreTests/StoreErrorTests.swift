import HeraldStore
import Testing
import _ConnectionPoolModule

/// Which failures of the store say the database could not be reached (`StoreError.isUnreachable`), which the worker
/// waits out as an outage however long it lasts. No services.
@Suite struct StoreErrorTests {
    /// After a minute of failed connects PostgresNIO's pool refuses every statement at once, until its own next try
    /// (up to a minute after the server is back): the statement never reached the server.
    @Test func thePoolsCircuitBreakerIsAnOutage() {
        let error = Store.storeError(
            ConnectionPoolError.connectionCreationCircuitBreakerTripped, what: "registering a job")
        #expect(error.isTransient)
        #expect(error.isUnreachable)
        #expect(
            error.description
                == "query_failed: registering a job failed (ConnectionPoolError: the pool's circuit breaker is open)")
    }

    /// A connection failure or a server starting up or shutting down is an outage; a statement the server ran and
    /// refused (a conflict, a missing table, a timeout) is not, nor is a value at fault.
    @Test(arguments: [
        ("08006", true), ("08001", true), ("57P01", true), ("57P03", true),
        ("40001", false), ("42P01", false), ("57014", false), ("53300", false), ("22003", false),
    ])
    func sqlStates(_ sqlState: String, unreachable: Bool) {
        #expect(StoreError.isUnreachable(sqlState: sqlState) == unreachable)
    }

    /// An error of another kind (not a value at fault) is transient, but says nothing of an outage.
    @Test func anErrorOfItsOwnIsNotAnOutage() {
        struct Other: Error {}
        let error = Store.storeError(Other(), what: "completing batches")
        #expect(!error.isUnreachable)
        #expect(error.isTransient)
    }
}
