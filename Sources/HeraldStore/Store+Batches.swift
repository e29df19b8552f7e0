import APNSCore
import HeraldCore
import Logging
import PostgresNIO

/// What a worker learns when it picks up a batch.
public enum BatchStart: Sendable, Hashable {
    /// Deliver it: the job's spec (JSON) and when the job was published (ms since 1970).
    case deliver(spec: String, publishedAt: Int64, throttlePerSecond: Int?)
    /// Already done (a redelivery): acknowledge without sending.
    case alreadyDone
    /// The job was cancelled or has failed: complete the batch without sending.
    case jobStopped(JobState)
    /// No such job (it expired out of the retention window).
    case unknownJob
}

extension Store {
    /// Records that a batch exists and says whether to deliver it. Idempotent: the planner and the deliverer may
    /// both create the row, in either order.
    public func beginBatch(_ key: BatchKey) async throws(StoreError) -> BatchStart {
        try await run("starting a batch") {
            let rows = try await client.query(
                """
                WITH created AS (
                    INSERT INTO batches (job_id, seq, attempt, state)
                    SELECT \(key.job), \(key.seq), \(key.attempt), 'pending' WHERE EXISTS (SELECT 1 FROM jobs WHERE id = \(key.job))
                    ON CONFLICT DO NOTHING RETURNING state)
                SELECT coalesce((SELECT state FROM created),
                                (SELECT state FROM batches WHERE job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt))),
                       j.state, j.spec::text, (extract(epoch FROM j.published_at) * 1000)::bigint, j.throttle_per_second
                FROM jobs j WHERE j.id = \(key.job)
                """,
                logger: logger
            )
            for try await (batchState, jobState, spec, publishedAt, throttle) in rows.decode(
                (String?, String, String?, Int64, Int?).self
            ) {
                if batchState == "done" { return .alreadyDone }
                let state = JobState(rawValue: jobState) ?? .failed
                if state == .cancelled || state == .failed { return .jobStopped(state) }
                guard let spec else { return .unknownJob }
                return .deliver(spec: spec, publishedAt: publishedAt, throttlePerSecond: throttle)
            }
            return .unknownJob
        }
    }

    /// Writes a batch's results and marks it done in one transaction, creating the retry batch for its transient
    /// failures if there is one, and finishing the job if this was its last pending batch.
    ///
    /// - Returns: nil if the batch was already done (another worker finished it first: nothing is written), else
    ///   the devices pruned and whether the job finished.
    public func complete(
        _ key: BatchKey,
        with writeBack: WriteBack,
        retry: BatchKey?
    ) async throws(StoreError) -> (pruned: Int, jobFinished: JobState?)? {
        try await run("completing a batch") {
            try await client.withTransaction(logger: logger) { connection in
                let claimed = try await connection.query(
                    """
                    UPDATE batches SET state = 'done', completed_at = now(), sent = \(writeBack.sent),
                        failed = \(writeBack.failures.count + writeBack.rejectedTokens), retried = \(writeBack.retried),
                        expired = \(writeBack.expired)
                    WHERE job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt) AND state = 'pending'
                    RETURNING 1
                    """,
                    logger: logger
                )
                var isMine = false
                for try await _ in claimed { isMine = true }
                guard isMine else { return nil }
                let pruned = try await Self.write(writeBack, on: connection, logger: logger)
                if pruned > 0 {
                    try await connection.query(
                        "UPDATE batches SET pruned = \(pruned) WHERE job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt)",
                        logger: logger
                    )
                }
                if let retry {
                    try await connection.query(
                        """
                        INSERT INTO batches (job_id, seq, attempt, state) VALUES (\(retry.job), \(retry.seq), \(retry.attempt), 'pending')
                        ON CONFLICT DO NOTHING
                        """,
                        logger: logger
                    )
                }
                let finished = try await Self.finishIfComplete(job: key.job, on: connection, logger: logger)
                return (pruned, finished)
            }
        }
    }

    /// Records how far planning got: the batch exists, and the cursor moves past it. Returns false if the job is no
    /// longer running (cancelled or failed), so that the planner stops.
    public func recordPlanned(_ key: BatchKey, cursor: String?) async throws(StoreError) -> Bool {
        try await run("recording a planned batch") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO batches (job_id, seq, attempt, state) VALUES (\(key.job), \(key.seq), \(key.attempt), 'pending')
                    ON CONFLICT DO NOTHING
                    """,
                    logger: logger
                )
                let rows = try await connection.query(
                    """
                    UPDATE jobs SET plan_cursor = \(cursor), batches = greatest(batches, \(key.seq + 1))
                    WHERE id = \(key.job) AND state = 'running' RETURNING 1
                    """,
                    logger: logger
                )
                for try await _ in rows { return true }
                return false
            }
        }
    }

    /// Plans a job that fits in one batch in one statement: the batch exists (pending) and planning is finished, so
    /// that the batch's own completion finishes the job — no further round trips per small job.
    public func planSingleBatch(_ key: BatchKey, cursor: String?) async throws(StoreError) {
        try await run("planning a single batch") {
            try await client.query(
                """
                WITH batch AS (
                    INSERT INTO batches (job_id, seq, attempt, state) VALUES (\(key.job), \(key.seq), \(key.attempt), 'pending')
                    ON CONFLICT DO NOTHING RETURNING 1)
                UPDATE jobs SET planned = true, batches = greatest(batches, 1), plan_cursor = \(cursor)
                WHERE id = \(key.job) AND state = 'running'
                """,
                logger: logger
            )
        }
    }

    /// Marks planning finished and finishes the job if every batch is already done.
    public func finishPlanning(job: String) async throws(StoreError) -> JobState? {
        try await run("finishing planning") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("UPDATE jobs SET planned = true WHERE id = \(job)", logger: logger)
                return try await Self.finishIfComplete(job: job, on: connection, logger: logger)
            }
        }
    }

    private static func finishIfComplete(job: String, on connection: PostgresConnection, logger: Logger) async throws -> JobState? {
        let rows = try await connection.query(
            """
            UPDATE jobs SET state = 'done', finished_at = now()
            WHERE id = \(job) AND state = 'running' AND planned
              AND NOT EXISTS (SELECT 1 FROM batches WHERE job_id = \(job) AND state = 'pending')
            RETURNING state
            """,
            logger: logger
        )
        for try await state in rows.decode(String.self) { return JobState(rawValue: state) }
        return nil
    }

    /// Takes `count` sends from the job's shared rate limit and says how long to wait before making them, so that
    /// all workers together stay under `perSecond`.
    public func throttle(job: String, count: Int, perSecond: Int) async throws(StoreError) -> Duration {
        try await run("taking from the throttle") {
            let seconds = Double(count) / Double(max(perSecond, 1))
            let rows = try await client.query(
                """
                WITH slot AS (
                    SELECT greatest(coalesce(throttle_next_at, clock_timestamp()), clock_timestamp()) AS start
                    FROM jobs WHERE id = \(job) FOR UPDATE)
                UPDATE jobs SET throttle_next_at = slot.start + make_interval(secs => \(seconds))
                FROM slot WHERE jobs.id = \(job)
                RETURNING (extract(epoch FROM slot.start - clock_timestamp()) * 1000000)::bigint
                """,
                logger: logger
            )
            for try await micros in rows.decode(Int64.self) { return .microseconds(max(micros, 0)) }
            return .zero
        }
    }

    /// Adds `increment` to the badge counter of each device and returns the new absolute values.
    public func incrementBadges(app: String, tokens: [DeviceToken], by increment: Int) async throws(StoreError) -> [String: Int] {
        guard !tokens.isEmpty else { return [:] }
        let hex = tokens.map(\.hex)
        return try await run("incrementing badges") {
            let rows = try await client.query(
                """
                UPDATE devices SET badge = badge + \(increment)
                WHERE app_id = \(app) AND token = ANY(\(hex)) RETURNING token, badge
                """,
                logger: logger
            )
            var badges: [String: Int] = [:]
            for try await (token, badge) in rows.decode((String, Int).self) { badges[token] = badge }
            return badges
        }
    }
}
