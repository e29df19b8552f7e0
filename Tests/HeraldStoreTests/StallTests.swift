import Foundation
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// `Store.run` gives up on a statement caught in an outage (`StallPolicy`), and only then: the outage probe opens
/// its own connections, so it sees a server that does not answer at once, and a statement that is merely long is
/// left to finish.
@Suite struct StallTests {
    static let stalls = StallPolicy(checkInterval: .milliseconds(100), grace: .milliseconds(300))
    static let logger = Logger(label: "test.stalls")

    /// Runs `body` with a store over the dev database whose probe connects with `probe`.
    static func withStore<T: Sendable>(
        probe: DatabaseConfiguration, _ body: (Store) async throws -> T
    ) async throws -> T {
        let server = try DatabaseConfiguration(url: TestServices.databaseURL)
        let client = PostgresClient(configuration: server.clientConfiguration, backgroundLogger: logger)
        let store = Store(
            client: client, logger: logger, stalls: stalls, probeConnection: try probe.connectionConfiguration())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(store)
        }
    }

    @Test func aStatementUnderWhichTheDatabaseDoesNotAnswerIsGivenUpOnAsTransient() async throws {
        // Nothing listens on port 1: to the probe, the server is down.
        var components = try #require(URLComponents(string: TestServices.databaseURL))
        components.port = 1
        let unreachable = try DatabaseConfiguration(url: try #require(components.string))
        try await Self.withStore(probe: unreachable) { store in
            // A statement that would hold its caller for a minute (as a lease does while the pool's circuit breaker
            // waits) is given up on once the probe has failed for the grace.
            let error = await #expect(throws: StoreError.self) {
                try await store.run("waiting for a connection") { try await Task.sleep(for: .seconds(60)) }
            }
            #expect(error?.isTransient == true)
            #expect(
                error?.description.contains("waiting for a connection failed: the database does not answer") == true)
        }
    }

    @Test func aLongStatementWhileTheDatabaseAnswersIsLeftToFinish() async throws {
        let server = try DatabaseConfiguration(url: TestServices.databaseURL)
        try await Self.withStore(probe: server) { store in
            // Eight check intervals, more than twice the grace: pinged all along, and never given up on.
            let value = try await store.run("a long statement") { [client = store.client] in
                var slept = 0
                for try await one in try await client.query("SELECT 1 FROM pg_sleep(0.8)", logger: Self.logger)
                    .decode(Int.self)
                {
                    slept = one
                }
                return slept
            }
            #expect(value == 1)
        }
    }
}
