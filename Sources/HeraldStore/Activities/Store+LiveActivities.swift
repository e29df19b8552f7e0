import HeraldCore
import Logging
import PostgresNIO

/// What resolving a Live Activity update or end decided (`Store.resolveLiveActivity`).
public struct LiveActivityResolution: Sendable, Hashable {
    /// The job whose newer event was already resolved: this one is not sent. Nil when it goes out.
    public var supersededBy: String?
    /// Whether the event goes at priority 10: asked for, and within the hour's budget.
    public var highPriority: Bool
    /// The activity's update tokens (hex, in token order) for `target.activity`; empty for a channel.
    public var tokens: [String]
    /// Whether the activity had more update tokens than the limit (the rest are not sent).
    public var moreTokens: Bool
}

extension Store {
    /// Resolves a Live Activity update or end in one transaction, so that a worker that dies half-way leaves nothing
    /// half-done:
    /// - the job's event is compared with the newest one resolved for the activity or channel; an older one is
    ///   superseded and nothing else happens;
    /// - priority 10 is granted if `wantsHighPriority` and the hour's budget (`budgetPerHour`) is not spent;
    /// - an activity's update tokens are read (at most `tokenLimit`), and for an end removed from the registry (the
    ///   activity is over);
    /// - the job's spec becomes what `spec` makes of the decision, so that retries and redeliveries send exactly it.
    public func resolveLiveActivity(
        _ job: JobKey,
        key: LiveActivityJob.Key,
        event: LiveActivityJob.Event,
        timestamp: Int64,
        wantsHighPriority: Bool,
        budgetPerHour: Int,
        tokenLimit: Int,
        spec: @escaping @Sendable (LiveActivityResolution) throws -> (spec: String, targetKind: String)
    ) async throws(StoreError) -> LiveActivityResolution {
        try await run("resolving a Live Activity job") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO live_activities (app_id, kind, key) VALUES (\(job.app), \(key.kind), \(key.id))
                    ON CONFLICT DO NOTHING
                    """,
                    logger: logger)
                let rows = try await connection.query(
                    """
                    SELECT newest_timestamp, newest_job, now() - budget_window_start >= interval '1 hour', budget_used
                    FROM live_activities WHERE app_id = \(job.app) AND kind = \(key.kind) AND key = \(key.id)
                    FOR UPDATE
                    """,
                    logger: logger)
                var state: (newest: Int64, newestJob: String?, windowOver: Bool, used: Int)?
                for try await (newest, newestJob, windowOver, used) in rows.decode((Int64, String?, Bool, Int).self) {
                    state = (newest, newestJob, windowOver, used)
                }
                guard let state else { throw StoreError(.queryFailed, "the Live Activity row was not found") }
                if state.newest > timestamp, state.newestJob != job.id {
                    return LiveActivityResolution(
                        supersededBy: state.newestJob ?? "", highPriority: false, tokens: [], moreTokens: false)
                }
                let used = state.windowOver ? 0 : state.used
                let granted = wantsHighPriority && used < budgetPerHour
                try await connection.query(
                    """
                    UPDATE live_activities SET
                        newest_timestamp = greatest(newest_timestamp, \(timestamp)), newest_job = \(job.id),
                        budget_window_start = CASE WHEN \(state.windowOver) THEN now() ELSE budget_window_start END,
                        budget_used = \(used + (granted ? 1 : 0)),
                        ended_at = CASE WHEN \(event == .end) THEN now() ELSE ended_at END,
                        updated_at = now()
                    WHERE app_id = \(job.app) AND kind = \(key.kind) AND key = \(key.id)
                    """,
                    logger: logger)
                var resolution = LiveActivityResolution(
                    supersededBy: nil, highPriority: granted, tokens: [], moreTokens: false)
                if case .activity(let activity) = key {
                    let tokens = try await connection.query(
                        """
                        SELECT token FROM activity_update_tokens WHERE app_id = \(job.app) AND activity_id = \(activity)
                        ORDER BY token LIMIT \(tokenLimit + 1)
                        """,
                        logger: logger)
                    for try await token in tokens.decode(String.self) { resolution.tokens.append(token) }
                    if resolution.tokens.count > tokenLimit {
                        resolution.tokens.removeLast()
                        resolution.moreTokens = true
                    }
                    if event == .end {
                        try await connection.query(
                            """
                            DELETE FROM activity_update_tokens
                            WHERE app_id = \(job.app) AND activity_id = \(activity)
                            """,
                            logger: logger)
                    }
                }
                let made = try spec(resolution)
                try await Self.setSpec(
                    job, spec: made.spec, targetKind: made.targetKind, on: connection, logger: logger)
                return resolution
            }
        }
    }

    /// Replaces a job's spec with the resolved one (a Live Activity start, once its push-to-start tokens are known).
    public func setResolvedSpec(_ job: JobKey, spec: String, targetKind: String) async throws(StoreError) {
        try await run("recording a resolved job") {
            try await client.withConnection { connection in
                try await Self.setSpec(job, spec: spec, targetKind: targetKind, on: connection, logger: logger)
            }
        }
    }

    private static func setSpec(
        _ job: JobKey, spec: String, targetKind: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE jobs SET spec = \(spec)::jsonb, target_kind = \(targetKind)
            WHERE app_id = \(job.app) AND id = \(job.id)
            """,
            logger: logger)
    }

    /// The spec a job is stored with, if it has one.
    public func jobSpec(_ job: JobKey) async throws(StoreError) -> String? {
        try await run("reading a job's spec") {
            let rows = try await client.query(
                "SELECT spec::text FROM jobs WHERE app_id = \(job.app) AND id = \(job.id)", logger: logger)
            for try await spec in rows.decode(String?.self) { return spec }
            return nil
        }
    }

    /// Ends a job that sent nothing: `cancelled` with `reason` (an update superseded by a newer one), or `done` with
    /// nothing targeted (no token was registered). The row is written if the job has none yet (a superseded job that
    /// never reached the planner). Returns false if the job was already final.
    @discardableResult
    ///
    /// - Parameter unstartedOnly: end the job only if no worker has started it (no row, or a row the API enqueued):
    ///   for a job whose message is superseded while another copy of it may be running elsewhere.
    public func endUnsentJob(
        _ job: JobKey, state: JobState, targetKind: String, reason: String?, unstartedOnly: Bool = false
    ) async throws(StoreError) -> Bool {
        let ending = EndJobs(
            unstartedOnly ? .recordUnstarted : .record,
            [EndJobs.Item(key: job, state: state, error: reason, kind: targetKind)])
        return try await !endJobs(ending, "ending a job that sent nothing").isEmpty
    }

    /// Records a broadcast's outcome: sent to the channel (`done`, one targeted and sent) or refused (`failed` with
    /// Apple's reason). Returns false if the job was already final.
    @discardableResult
    public func finishBroadcast(_ job: JobKey, sent: Bool, reason: String?) async throws(StoreError) -> Bool {
        let counts = EndJobs.Counts(targeted: 1, sent: sent ? 1 : 0, failed: sent ? 0 : 1)
        let ending = EndJobs(
            .stop, [EndJobs.Item(key: job, state: sent ? .done : .failed, error: reason, counts: counts)])
        return try await !endJobs(ending, "finishing a broadcast").isEmpty
    }
}
