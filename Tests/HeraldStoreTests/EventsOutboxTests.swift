import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

/// The events outbox (schemas/018) against PostgreSQL: what the triggers write, for which apps, and how the relay
/// takes it.
@Suite(.needsServices) struct EventsOutboxTests {
    static let logger = Logger(label: "test.events")

    static func outbox(_ store: Store) async throws -> [(key: String, body: String)] {
        let rows = try await store.client.query(
            "SELECT routing_key, body::text FROM event_outbox ORDER BY id", logger: logger)
        var result: [(key: String, body: String)] = []
        for try await (key, body) in rows.decode((String, String).self) { result.append((key, body)) }
        return result
    }

    @Test func aJobsFinalStateAndItsPrunedTokensAreWrittenOnceForAnAppWithEvents() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.setEventApps(with: ["a"], without: ["b"])
            let client = store.client
            try await client.query(
                """
                INSERT INTO jobs (id, app_id, state, target_kind, targeted, sent)
                VALUES ('j1', 'a', 'running', 'all', 3, 2), ('j2', 'b', 'running', 'all', 1, 1)
                """, logger: Self.logger)
            #expect(try await Self.outbox(store).isEmpty)
            // The change to a final state writes one event; the same state again, or another app's, writes none.
            try await client.query("UPDATE jobs SET state = 'done', pruned = 1 WHERE id = 'j1'", logger: Self.logger)
            try await client.query("UPDATE jobs SET state = 'done' WHERE id = 'j1'", logger: Self.logger)
            try await client.query("UPDATE jobs SET state = 'failed', error = 'x' WHERE id = 'j2'", logger: Self.logger)
            // A job inserted final (a group of small jobs) writes one too.
            try await client.query(
                "INSERT INTO jobs (id, app_id, state, target_kind, sent) VALUES ('j3', 'a', 'done', 'tokens', 1)",
                logger: Self.logger)
            // One statement's pruned tokens: one event per job.
            try await client.query(
                """
                INSERT INTO dead_tokens (app_id, token, reason, job_id)
                VALUES ('a', 'bb', 'Unregistered', 'j1'), ('a', 'aa', 'BadDeviceToken', 'j1'),
                       ('b', 'cc', 'Unregistered', 'j2')
                """, logger: Self.logger)
            let events = try await Self.outbox(store)
            #expect(events.map(\.key) == ["job.finished.a", "job.finished.a", "token.pruned.a"])
            #expect(events[0].body.contains(#""job": "j1""#) && events[0].body.contains(#""pruned": 1"#))
            #expect(events[1].body.contains(#""job": "j3""#))
            #expect(
                events[2].body.contains(
                    #"[{"token": "aa", "reason": "BadDeviceToken", "platform": "ios"}, {"token": "bb""#))

            // The relay hands them over oldest first and deletes them once published; a failed publish keeps them.
            await #expect(throws: (any Error).self) {
                _ = try await store.relayEvents(limit: 10) { _ in throw CancellationError() }
            }
            #expect(try await Self.outbox(store).count == 3)
            let published = Mutex<[OutboxEvent]>([])
            #expect(try await store.relayEvents(limit: 2) { events in published.withLock { $0 += events } } == 2)
            #expect(try await store.relayEvents(limit: 2) { events in published.withLock { $0 += events } } == 1)
            let all = published.withLock { $0 }
            #expect(all.map(\.routingKey) == events.map(\.key) && all.map(\.id) == all.map(\.id).sorted())
            #expect(try await Self.outbox(store).isEmpty)

            // Turned off: nothing more is written.
            try await store.setEventApps(with: [], without: ["a"])
            try await client.query(
                "INSERT INTO jobs (id, app_id, state, target_kind) VALUES ('j4', 'a', 'cancelled', 'all')",
                logger: Self.logger)
            #expect(try await Self.outbox(store).isEmpty)
        }
    }
}
