import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// Retention against the real PostgreSQL: exactly the records past their age go, in chunks, under one lock.
@Suite(.needsServices) struct RetentionTests {
    static let logger = Logger(label: "RetentionTests")
    static let day: Int64 = 86_400
    /// A minute either side of the age: the rows just inside and just outside it.
    static let due = day + 60
    static let notYetDue = day - 60

    @Test func finishedJobsPastTheAgeGoWithTheirBatchesAndBadgesAndNothingElseDoes() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            // (id, state, created seconds ago, finished seconds ago)
            let jobs: [(String, String, Int64, Int64?)] = [
                ("done-due", "done", 3 * Self.day, Self.due),
                ("failed-due", "failed", 3 * Self.day, Self.due),
                ("cancelled-due", "cancelled", 3 * Self.day, 2 * Self.day),
                ("done-not-yet", "done", 3 * Self.day, Self.notYetDue),
                ("running-old", "running", 3 * Self.day, nil),
                ("scheduled-old", "scheduled", 3 * Self.day, nil),
                ("done-recent", "done", 60, 30),
            ]
            for (id, state, created, finished) in jobs {
                try await store.client.query(
                    """
                    INSERT INTO jobs (id, app_id, state, target_kind, created_at, finished_at)
                    VALUES (\(id), 'a', \(state), 'tokens', now() - make_interval(secs => \(Double(created))),
                            now() - make_interval(secs => \(finished.map(Double.init))))
                    """, logger: Self.logger)
                try await store.client.query(
                    "INSERT INTO batches (app_id, job_id, seq, attempt, state) VALUES ('a', \(id), 0, 1, 'done')",
                    logger: Self.logger)
                try await store.client.query(
                    "INSERT INTO badge_applications (app_id, job_id, token, badge) VALUES ('a', \(id), 'ab', 1)",
                    logger: Self.logger)
            }
            // The same id in another app, finished recently: keyed by (app, id), it stays.
            try await store.client.query(
                """
                INSERT INTO jobs (id, app_id, state, target_kind, created_at, finished_at)
                VALUES ('done-due', 'b', 'done', 'tokens', now() - interval '3 days', now() - interval '1 hour')
                """, logger: Self.logger)

            #expect(try await store.deleteAllExpired(.jobs, olderThan: .seconds(Self.day)) == 3)
            let kept = ["done-not-yet", "running-old", "scheduled-old", "done-recent"]
            #expect(try await strings("SELECT id FROM jobs WHERE app_id = 'a' ORDER BY id", store) == kept.sorted())
            #expect(try await strings("SELECT id FROM jobs WHERE app_id = 'b'", store) == ["done-due"])
            #expect(try await strings("SELECT job_id FROM batches ORDER BY job_id", store) == kept.sorted())
            #expect(try await strings("SELECT job_id FROM badge_applications ORDER BY job_id", store) == kept.sorted())
            // Nothing more is due.
            #expect(try await store.deleteExpired(.jobs, olderThan: .seconds(Self.day)) == 0)
        }
    }

    @Test(arguments: [RetainedRecords.deadTokens, .deliveryFailures, .webhookEvents])
    func recordsPastTheAgeGoAndThoseJustInsideItStay(_ what: RetainedRecords) async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let ages: [(String, Int64)] = [
                ("due", Self.due), ("long-due", 40 * Self.day), ("not-yet", Self.notYetDue), ("new", 0),
            ]
            for (reason, age) in ages { try await insert(what, reason: reason, secondsAgo: age, store) }

            #expect(try await store.deleteAllExpired(what, olderThan: .seconds(Self.day)) == 2)
            let reason = what == .webhookEvents ? "body" : "reason"
            #expect(
                try await strings("SELECT \(unescaped: reason) FROM \(unescaped: what.rawValue) ORDER BY 1", store)
                    == ["new", "not-yet"])
        }
    }

    @Test(arguments: RetainedRecords.allCases)
    func aBacklogGoesInChunksOfTheLimit(_ what: RetainedRecords) async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for n in 0..<25 { try await insert(what, reason: "due-\(n)", secondsAgo: Self.due + Int64(n), store) }
            for n in 0..<3 { try await insert(what, reason: "young-\(n)", secondsAgo: 10, store) }

            #expect(try await store.deleteExpired(what, olderThan: .seconds(Self.day), limit: 10) == 10)
            var chunks: [Int] = []
            let removed = try await store.deleteAllExpired(what, olderThan: .seconds(Self.day), chunk: 10) {
                chunks.append($0)
            }
            #expect(removed == 15)
            #expect(chunks == [10, 5])
            #expect(try await count(what, store) == 3)
        }
    }

    @Test func oneSessionAtATimeHoldsTheRetentionLock() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let inner = try await store.withRetentionLock {
                // Another session (another pool connection) is refused while the lock is held, without waiting.
                try await store.withRetentionLock { "second" }
            }
            #expect(inner == .some(nil))
            // Released afterwards, also when the body throws.
            await #expect(throws: CancellationError.self) {
                try await store.withRetentionLock { throw CancellationError() }
            }
            #expect(try await store.withRetentionLock { "again" } == "again")
        }
    }

    // MARK: Rows

    /// A job (final, with its reason as id), a dead token or a delivery failure recorded `secondsAgo`.
    private func insert(_ what: RetainedRecords, reason: String, secondsAgo: Int64, _ store: Store) async throws {
        let at = Double(secondsAgo)
        switch what {
        case .jobs:
            try await store.client.query(
                """
                INSERT INTO jobs (id, app_id, state, target_kind, created_at, finished_at)
                VALUES (\(reason), 'a', 'done', 'tokens', now() - make_interval(secs => \(at)),
                        now() - make_interval(secs => \(at)))
                """, logger: Self.logger)
        case .deadTokens:
            try await store.client.query(
                """
                INSERT INTO dead_tokens (app_id, token, reason, recorded_at)
                VALUES ('a', 'ab', \(reason), now() - make_interval(secs => \(at)))
                """, logger: Self.logger)
        case .deliveryFailures:
            try await store.client.query(
                """
                INSERT INTO delivery_failures (job_id, app_id, token, reason, recorded_at)
                VALUES ('j', 'a', 'ab', \(reason), now() - make_interval(secs => \(at)))
                """, logger: Self.logger)
        case .webhookEvents:
            // The event's body holds the reason, its id follows a sequence of the test's own.
            try await store.client.query(
                """
                INSERT INTO webhook_events (id, app_id, routing_key, body, created_at)
                SELECT coalesce(max(id), 0) + 1, 'a', 'job.finished.a', \(reason), now() - make_interval(secs => \(at))
                FROM webhook_events
                """, logger: Self.logger)
        }
    }

    private func count(_ what: RetainedRecords, _ store: Store) async throws -> Int64 {
        let rows = try await store.client.query(
            "SELECT count(*)::bigint FROM \(unescaped: what.rawValue)", logger: Self.logger)
        var count: Int64 = -1
        for try await n in rows.decode(Int64.self) { count = n }
        return count
    }

    private func strings(_ query: PostgresQuery, _ store: Store) async throws -> [String] {
        try await store.client.query(query, logger: Self.logger).collect().map { try $0.decode(String.self) }
    }
}
