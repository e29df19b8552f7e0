import PostgresNIO

/// The records retention removes once they are older than their age.
public enum RetainedRecords: String, Sendable, Hashable, CaseIterable {
    /// Finished jobs (`done`, `failed`, `cancelled`), by `finished_at`, with their batches and badge records: a job
    /// id is remembered for idempotency as long as its row is kept.
    case jobs
    /// `dead_tokens` rows, by `recorded_at` (the cleanup report and `herald devices restore` read them).
    case deadTokens = "dead_tokens"
    /// `delivery_failures` rows, by `recorded_at`.
    case deliveryFailures = "delivery_failures"
    /// `webhook_events` rows (schemas/028) of events not delivered, by `created_at`: kept as long as their parked
    /// copies may be replayed; a copy that outlives its row is refused unsigned.
    case webhookEvents = "webhook_events"
}

extension RetainedRecords {
    /// The table and the time column of the records kept by age alone (jobs have a statement of their own).
    fileprivate var tableAndTimeColumn: (table: String, column: String) {
        switch self {
        case .jobs: ("jobs", "finished_at")
        case .deadTokens: ("dead_tokens", "recorded_at")
        case .deliveryFailures: ("delivery_failures", "recorded_at")
        case .webhookEvents: ("webhook_events", "created_at")
        }
    }
}

extension Store {
    /// The seconds and the row limit of a retention statement, as bound parameters $1 and $2.
    fileprivate static func retentionBinds(seconds: Double, limit: Int) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 2)
        binds.append(seconds, context: .default)
        binds.append(limit, context: .default)
        return binds
    }

    /// The most rows one retention statement deletes: a backlog is removed in statements this size, each its own
    /// short transaction, so that no statement holds its row locks (or a vacuum's worth of dead rows) for long.
    public static let retentionChunk = 10_000

    /// The session-level advisory lock that lets one worker at a time run retention ("HERR").
    static let retentionLock: Int64 = 0x4845_5252

    /// Deletes up to `limit` of the `what` records older than `age` (by the database's clock) and returns how many
    /// it deleted. Rows another transaction holds are skipped, not waited for.
    public func deleteExpired(
        _ what: RetainedRecords, olderThan age: Duration, limit: Int = Store.retentionChunk
    ) async throws(StoreError) -> Int {
        let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
        let limit = max(1, limit)
        return try await run("removing expired \(what.rawValue)") {
            let rows: PostgresRowSequence
            switch what {
            case .jobs:
                // created_at ≤ finished_at, so the bound on created_at (jobs_by_time) removes nothing the other
                // would keep; it keeps the statement an index range scan instead of a walk of every job.
                rows = try await client.query(
                    """
                    WITH due AS (
                        SELECT app_id, id FROM jobs
                        WHERE created_at < now() - make_interval(secs => \(seconds))
                        AND herald_job_is_final(state) AND finished_at < now() - make_interval(secs => \(seconds))
                        ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED),
                    gone AS (
                        DELETE FROM jobs USING due WHERE jobs.app_id = due.app_id AND jobs.id = due.id
                        RETURNING jobs.app_id, jobs.id),
                    gone_batches AS (DELETE FROM batches WHERE (app_id, job_id) IN (SELECT app_id, id FROM gone)),
                    gone_badges AS (
                        DELETE FROM badge_applications WHERE (app_id, job_id) IN (SELECT app_id, id FROM gone))
                    SELECT count(*)::bigint FROM gone
                    """,
                    logger: logger)
            case .deadTokens, .deliveryFailures, .webhookEvents:
                // One shape for the tables kept by age alone: the oldest `limit` rows past the age, by the indexed
                // time column. Table and column come from the closed RetainedRecords set, never from outside.
                let (table, column) = what.tableAndTimeColumn
                rows = try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            WITH gone AS (
                                DELETE FROM \(table) WHERE id IN (
                                    SELECT id FROM \(table) WHERE \(column) < now() - make_interval(secs => $1)
                                    ORDER BY \(column) LIMIT $2 FOR UPDATE SKIP LOCKED)
                                RETURNING 1)
                            SELECT count(*)::bigint FROM gone
                            """,
                        binds: Self.retentionBinds(seconds: seconds, limit: limit)),
                    logger: logger)
            }
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    /// Deletes every `what` record older than `age`, one chunk of `chunk` rows per statement, and returns how many
    /// it deleted. `removed` hears of each chunk as it goes (for a metric), so a pass cut short still counts.
    @discardableResult
    public func deleteAllExpired(
        _ what: RetainedRecords, olderThan age: Duration, chunk: Int = Store.retentionChunk,
        removed: (Int) -> Void = { _ in }
    ) async throws(StoreError) -> Int {
        var total = 0
        while true {
            let deleted = try await deleteExpired(what, olderThan: age, limit: chunk)
            if deleted > 0 { removed(deleted) }
            total += deleted
            if deleted < max(1, chunk) { return total }
        }
    }

    /// Runs `body` if this session gets the retention lock (`pg_try_advisory_lock`, not waiting), on a connection
    /// held for the purpose, and releases it afterwards; returns nil without running `body` when another worker
    /// holds it. A worker that dies releases it with its session.
    public func withRetentionLock<T: Sendable>(
        _ body: @Sendable () async throws -> T
    ) async throws -> T? {
        let logger = self.logger
        let lock = Self.retentionLock
        let outcome: Result<T, any Error>?
        do {
            outcome = try await client.withConnection { connection in
                let rows = try await connection.query("SELECT pg_try_advisory_lock(\(lock))", logger: logger)
                var locked = false
                for try await granted in rows.decode(Bool.self) { locked = granted }
                guard locked else { return nil }
                // The body's own failure is its caller's to read; the unlock runs either way.
                let outcome: Result<T, any Error>
                do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                try await connection.query("SELECT pg_advisory_unlock(\(lock))", logger: logger)
                return outcome
            }
        } catch {
            throw Self.storeError(error, what: "holding the retention lock")
        }
        return try outcome?.get()
    }
}
