import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// The events triggers (schemas/018) run only while some app has events (schemas/025): a group of small jobs of an
/// app without them pays for no transition table.
@Suite(.needsServices) struct EventTriggerTests {
    static let logger = Logger(label: "event-triggers")

    static func enabled(_ store: Store) async throws -> [String: Bool] {
        let rows = try await store.client.query(
            """
            SELECT tgname, tgenabled <> 'D' FROM pg_trigger
            WHERE tgname IN ('jobs_inserted_final', 'jobs_final_updated', 'dead_tokens_pruned')
            """,
            logger: logger)
        var states: [String: Bool] = [:]
        for try await (name, on) in rows.decode((String, Bool).self) { states[name] = on }
        return states
    }

    static func events(_ store: Store) async throws -> Int {
        let rows = try await store.client.query("SELECT count(*)::int FROM event_outbox", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    @Test func theTriggersRunOnlyWhileSomeAppHasEvents() async throws {
        try await TemporaryDatabase.withMigratedStore(logger: Self.logger) { store, _ in
            let names = ["jobs_inserted_final", "jobs_final_updated", "dead_tokens_pruned"]
            #expect(try await Self.enabled(store) == Dictionary(uniqueKeysWithValues: names.map { ($0, false) }))
            try await store.recordRejectedJob(id: "quiet", app: "a", reason: "x")
            #expect(try await Self.events(store) == 0)

            try await store.setEventApps(with: ["a"], without: [])
            #expect(try await Self.enabled(store) == Dictionary(uniqueKeysWithValues: names.map { ($0, true) }))
            // On for every app's rows; the event itself still only for the apps that have events.
            try await store.recordRejectedJob(id: "loud", app: "a", reason: "x")
            try await store.recordRejectedJob(id: "other", app: "b", reason: "x")
            #expect(try await Self.events(store) == 1)

            // A second app and a repeated sync change nothing; the last app leaving turns them off.
            try await store.setEventApps(with: ["a", "c"], without: [])
            #expect(try await Self.enabled(store).values.allSatisfy { $0 })
            try await store.setEventApps(with: [], without: ["a"])
            #expect(try await Self.enabled(store).values.allSatisfy { $0 })
            try await store.setEventApps(with: [], without: ["c"])
            #expect(try await Self.enabled(store).values.allSatisfy { !$0 })
            try await store.recordRejectedJob(id: "quiet-again", app: "a", reason: "x")
            #expect(try await Self.events(store) == 1)
        }
    }
}
