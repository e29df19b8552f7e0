import HeraldCore
import Logging
import PostgresNIO

/// What happened when a producer enqueued a job through the API.
public enum EnqueueResult: Sendable, Hashable {
    /// A new job row, queued or scheduled: the caller, and only the caller, publishes it.
    case created(JobState)
    /// The app has a job with this id already: whether it was enqueued with the same spec, and its state.
    case existing(sameSpec: Bool, state: JobState)
}

extension Store {
    /// Records a job that a producer submitted through the API before it is published, so that its status can be
    /// read at once and its id works as an idempotency key within its app: queued, or scheduled if its `send_at` is
    /// ahead. The insert is atomic, so of concurrent requests with one id exactly one is `.created`. The worker takes
    /// the row over when the message arrives (`register`).
    public func enqueue(_ job: PreparedJob, spec: String) async throws(StoreError) -> EnqueueResult {
        let sendAt = job.sendAt.map { Double($0) / 1000 }
        for _ in 0..<3 {
            let result: EnqueueResult? = try await run("enqueueing a job") {
                let rows = try await client.query(
                    """
                    WITH inserted AS (
                        INSERT INTO jobs (id, app_id, state, target_kind, spec, send_at, published_at,
                                          throttle_per_second, awaiting_publish)
                        VALUES (\(job.id), \(job.app),
                                CASE WHEN to_timestamp(\(sendAt)) > now() THEN 'scheduled' ELSE 'queued' END,
                                \(job.audience.kind), \(spec)::jsonb, to_timestamp(\(sendAt)), now(),
                                \(job.throttlePerSecond), true)
                        ON CONFLICT (app_id, id) DO NOTHING
                        RETURNING state)
                    SELECT state, true, true FROM inserted
                    UNION ALL
                    SELECT state, false, coalesce(spec = \(spec)::jsonb, false) FROM jobs
                    WHERE app_id = \(job.app) AND id = \(job.id) AND NOT EXISTS (SELECT 1 FROM inserted)
                    """,
                    logger: logger
                )
                for try await (state, inserted, same) in rows.decode((String, Bool, Bool).self) {
                    let parsed = JobState(rawValue: state) ?? .failed
                    return inserted ? .created(parsed) : .existing(sameSpec: same, state: parsed)
                }
                // A concurrent insert of the same id committed after this statement's snapshot: look again.
                return nil
            }
            if let result { return result }
        }
        throw StoreError(.queryFailed, "enqueueing a job found neither a new nor an existing row")
    }

    /// Records that the broker confirmed the message of a job `enqueue` created: the workers' sweeper
    /// (`releaseUnpublishedJobs`) leaves it alone from then on.
    public func markPublished(_ job: JobKey) async throws(StoreError) {
        try await run("recording a job as published") {
            try await client.query(
                """
                UPDATE jobs SET awaiting_publish = false
                WHERE app_id = \(job.app) AND id = \(job.id) AND awaiting_publish
                """,
                logger: logger)
        }
    }

    /// Removes a job row that `enqueue` created when its message could not be published, so that a retry with the
    /// same id starts afresh. Only a row no worker has touched is removed.
    public func withdrawEnqueuedJob(_ job: JobKey) async throws(StoreError) {
        try await run("withdrawing a job") {
            try await client.query(
                """
                DELETE FROM jobs
                WHERE app_id = \(job.app) AND id = \(job.id) AND state IN ('queued', 'scheduled') AND started_at IS NULL
                """,
                logger: logger
            )
        }
    }
}
