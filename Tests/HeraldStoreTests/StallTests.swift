import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// `Store.run` gives up on a statement caught in an outage (`StallPolicy`), and only then: the outage probe opens
/// its own connections, so it sees a server that does not answer at once, and a statement that is merely long is
/// left to finish.
@Suite(.needsServices) struct StallTests {
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

    /// A group of small jobs whose sends outlast the stall grace while the database does not answer: the claim is
    /// given up on, but not the notifications on their way. Their rows come back to be written once the database
    /// is back (`deliveredNotWritten`), rather than the group being thrown away as failed and parked (issue 32: no
    /// path parks during an outage).
    @Test func aClaimGivenUpOnWhileSendingWaitsForTheSendsAndLeavesTheirRowsToTheCaller() async throws {
        var components = try #require(URLComponents(string: TestServices.databaseURL))
        components.port = 1
        let unreachable = try DatabaseConfiguration(url: try #require(components.string))
        try await TemporaryDatabase.withMigratedStore { _, database in
            let (givenUp, signal) = AsyncStream<Void>.makeStream()
            let logger = Logger(label: "test.stalls") { _ in
                Signal(
                    message: "a group's claim was given up on while it was sending, waiting for its sends",
                    continuation: signal)
            }
            let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger)
            let store = Store(
                client: client, logger: logger, stalls: Self.stalls,
                probeConnection: try unreachable.connectionConfiguration())
            let keys = [JobKey(app: "a", id: "s1"), JobKey(app: "a", id: "s2")]
            let claim = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                return try await store.claimSmallJobs(keys) { claimed in
                    // The sends end only once the claim, given up on by the watchdog, waits for them (cancelled
                    // with the claim, as they were before, they end with it).
                    for await _ in givenUp { break }
                    try Task.checkCancellation()
                    let rows = claimed.map {
                        SmallJobRow(id: $0.id, app: $0.app, spec: "{}", publishedAt: 0, tokenCount: 1, done: nil)
                    }
                    return (claimed, rows)
                }
            }
            guard case .deliveredNotWritten(let claimed, let rows, let error) = claim else {
                Issue.record("expected the sent group back to be written, got \(claim)")
                return
            }
            #expect(claimed == Set(keys))
            #expect(Set(rows.map(\.id)) == ["s1", "s2"])
            #expect(error.isTransient)
        }
    }

    /// Tells `continuation` when `message` is logged.
    struct Signal: LogHandler {
        let message: String
        let continuation: AsyncStream<Void>.Continuation
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            if event.message.description == message { continuation.yield() }
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
