import APNSCore
import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// What a worker learns when it picks up a batch.
public enum BatchStart: Sendable, Hashable {
    /// Deliver it: the job's spec (JSON), when the job was published (ms since 1970), its rate, and how far an
    /// earlier delivery of the batch got (its committed slices).
    case deliver(spec: String, publishedAt: Int64, throttlePerSecond: Int?, progress: BatchProgress = BatchProgress())
    /// Already done (a redelivery): acknowledge without sending.
    case alreadyDone
    /// The job was cancelled or has failed: complete the batch without sending.
    case jobStopped(JobState)
    /// No such job (it expired out of the retention window).
    case unknownJob
}

/// One batch's results, to be written and the batch marked done (`Store.complete(_:)`).
public struct BatchCompletion: Sendable {
    public var key: BatchKey
    public var writeBack: WriteBack
    /// The retry batch for the transient failures, created pending in the same transaction.
    public var retry: BatchKey?

    public init(key: BatchKey, writeBack: WriteBack, retry: BatchKey?) {
        self.key = key
        self.writeBack = writeBack
        self.retry = retry
    }
}

/// What `Store.complete(_:)` did.
public struct CompletedBatches: Sendable, Hashable {
    /// The batches this call completed (the others were already done), with the devices each pruned.
    public var pruned: [BatchKey: Int] = [:]
    /// The jobs this call finished, with their final state.
    public var finished: [JobKey: JobState] = [:]

    public init() {}
}

extension Store {
    /// Records that a batch exists and says whether to deliver it. Idempotent: the planner and the deliverer may
    /// both create the row, in either order.
    public func beginBatch(_ key: BatchKey) async throws(StoreError) -> BatchStart {
        try await run("starting a batch") {
            let rows = try await client.query(Self.beginBatchQuery(key), logger: logger)
            for try await (batchState, jobState, spec, publishedAt, throttle, settled, through, held) in rows.decode(
                (String?, String, String?, Int64, Int?, Int?, String?, [String]?).self
            ) {
                if batchState == "done" { return .alreadyDone }
                let state = JobState(rawValue: jobState) ?? .failed
                if state == .cancelled || state == .failed { return .jobStopped(state) }
                guard let spec else { return .unknownJob }
                let progress = BatchProgress(settled: settled ?? 0, settledThrough: through, heldRetries: held ?? [])
                return .deliver(spec: spec, publishedAt: publishedAt, throttlePerSecond: throttle, progress: progress)
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
        let completed = try await complete([BatchCompletion(key: key, writeBack: writeBack, retry: retry)])
        guard let pruned = completed.pruned[key] else { return nil }
        return (pruned, completed.finished[key.jobKey])
    }

    /// Completes many batches (of any jobs) in one transaction and a handful of statements, whatever their number:
    /// what the worker does for a group of small jobs. Each batch is claimed only if still pending; the results of
    /// the others are not written (another delivery finished them first).
    public func complete(_ completions: [BatchCompletion]) async throws(StoreError) -> CompletedBatches {
        var unique: [BatchKey: BatchCompletion] = [:]
        for completion in completions where unique[completion.key] == nil { unique[completion.key] = completion }
        // Sorted, so that concurrent group completions lock batch and job rows in the same order.
        let items = unique.values.sorted {
            ($0.key.app, $0.key.job, $0.key.seq, $0.key.attempt) < ($1.key.app, $1.key.job, $1.key.seq, $1.key.attempt)
        }
        guard !items.isEmpty else { return CompletedBatches() }
        let completed = try await run("completing batches") {
            try await client.withTransaction(logger: logger) { connection in
                let claimedRows = try await connection.query(Self.claimBatchesQuery(items), logger: logger)
                var claimed = Set<BatchKey>()
                for try await (app, job, seq, attempt) in claimedRows.decode((String, String, Int, Int).self) {
                    claimed.insert(BatchKey(app: app, job: job, seq: seq, attempt: attempt))
                }
                let mine = items.filter { claimed.contains($0.key) }
                guard !mine.isEmpty else { return CompletedBatches() }

                var result = CompletedBatches()
                // Every claimed job gets one row below: the counts of its batches that had only counts, summed.
                var counts: [JobKey: WriteBack] = [:]
                for item in mine {
                    let writeBack = item.writeBack
                    var sum = counts[writeBack.job] ?? WriteBack(jobID: writeBack.jobID, app: writeBack.app)
                    if writeBack.prunes.isEmpty && writeBack.failures.isEmpty {
                        sum.add(writeBack)
                        result.pruned[item.key] = 0
                    } else {
                        // Dead tokens and failures to record: the full write-back, per batch (the exception).
                        let pruned = try await Self.write(writeBack, on: connection, logger: logger)
                        if pruned > 0 {
                            try await connection.query(
                                Self.batchPrunedQuery(item.key, pruned: pruned), logger: logger)
                        }
                        result.pruned[item.key] = pruned
                    }
                    counts[writeBack.job] = sum
                }
                // First deliveries of unproven devices, per app (the prune breaker's evidence, schemas/026).
                var delivered: [String: [DeviceToken]] = [:]
                for item in mine where !item.writeBack.delivered.isEmpty {
                    delivered[item.writeBack.app, default: []] += item.writeBack.delivered
                }
                for (app, tokens) in delivered.sorted(by: { $0.key < $1.key }) {
                    try await Self.markDelivered(app: app, tokens: tokens, on: connection, logger: logger)
                }
                let retries = mine.compactMap(\.retry)
                if !retries.isEmpty {
                    try await connection.query(Self.retryBatchesQuery(retries), logger: logger)
                }
                let sums = counts.values.sorted { $0.job < $1.job }
                result.finished = try await Self.addCountsAndFinish(sums, on: connection, logger: logger)
                return result
            }
        }
        metrics.ended(completed.finished.values)
        return completed
    }

    /// Adds each job's counts, then finishes those that are running, fully planned and have no pending batch left.
    /// Returns the jobs finished.
    ///
    /// Two statements on purpose: the first locks the job rows, so that the second reads the pending batches with
    /// a snapshot taken after every other completion of the same jobs has committed. (In one statement the pending
    /// batches would be read before waiting for the lock, and two workers completing a job's last two batches at
    /// once would each see the other's as pending: the job would never finish.)
    private static func addCountsAndFinish(_ sums: [WriteBack], on connection: PostgresConnection, logger: Logger)
        async throws -> [JobKey: JobState]
    {
        try await connection.query(addCountsQuery(sums), logger: logger)
        return try await finishIfComplete(jobs: sums.map(\.job), on: connection, logger: logger)
    }

    /// Records how far planning got: the batch exists, and the cursor moves past it. Returns false if the job is no
    /// longer running (cancelled or failed), so that the planner stops.
    public func recordPlanned(_ key: BatchKey, cursor: String?) async throws(StoreError) -> Bool {
        try await run("recording a planned batch") {
            try await client.withTransaction(logger: logger) { connection in
                let statements = Self.recordPlannedQueries(key, cursor: cursor)
                try await connection.query(statements.batch, logger: logger)
                let rows = try await connection.query(statements.cursor, logger: logger)
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
                    INSERT INTO batches (app_id, job_id, seq, attempt, state)
                    VALUES (\(key.app), \(key.job), \(key.seq), \(key.attempt), 'pending')
                    ON CONFLICT DO NOTHING RETURNING 1)
                UPDATE jobs SET planned = true, batches = greatest(batches, 1), plan_cursor = \(cursor)
                WHERE app_id = \(key.app) AND id = \(key.job) AND state = 'running'
                """,
                logger: logger
            )
        }
    }

    /// Marks planning finished and finishes the job if every batch is already done.
    public func finishPlanning(job: JobKey) async throws(StoreError) -> JobState? {
        let finished = try await run("finishing planning") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "UPDATE jobs SET planned = true WHERE app_id = \(job.app) AND id = \(job.id)", logger: logger)
                return try await Self.finishIfComplete(jobs: [job], on: connection, logger: logger)[job]
            }
        }
        metrics.ended(finished.map { [$0] } ?? [])
        return finished
    }

    /// Finishes each of `jobs` that is running, fully planned and has no pending batch left (`herald_end_jobs`,
    /// `complete`); returns those finished. The caller counts them once its transaction has committed.
    private static func finishIfComplete(jobs: [JobKey], on connection: PostgresConnection, logger: Logger)
        async throws -> [JobKey: JobState]
    {
        let ended = try await endJobs(
            EndJobs(.complete, jobs.map { EndJobs.Item(key: $0) }), on: connection, logger: logger)
        var finished: [JobKey: JobState] = [:]
        for job in ended where job.ended { if let key = job.key { finished[key] = job.state } }
        return finished
    }

    /// Takes a batch's turn of `count` sends in the rates it is under, if the turn starts within `window`: its
    /// job's (`jobRate`, the leaky bucket in the job's row) and its app's (`appRate`, `app_send_rates`), so that
    /// all workers together stay under each. The turn starts when both are free; a turn further off is not taken.
    /// Either way says how long until it starts.
    public func takeTurn(
        job: JobKey, count: Int, jobRate: Int?, appRate: Int?, within window: Duration
    ) async throws(StoreError) -> ThrottleSlot {
        try await run("taking a turn in the send rate") {
            try await client.withTransaction(logger: logger) { connection in
                // The app's row first, then the job's: every batch locks them in that order.
                var nexts: [Date] = []
                if appRate != nil {
                    let rows = try await connection.query(
                        """
                        INSERT INTO app_send_rates AS r (app_id, next_at) VALUES (\(job.app), clock_timestamp())
                        ON CONFLICT (app_id) DO UPDATE SET next_at = r.next_at RETURNING r.next_at
                        """, logger: logger)
                    for try await next in rows.decode(Date.self) { nexts.append(next) }
                }
                let rows = try await connection.query(
                    """
                    SELECT coalesce(throttle_next_at, clock_timestamp()), clock_timestamp() FROM jobs
                    WHERE app_id = \(job.app) AND id = \(job.id) FOR UPDATE
                    """, logger: logger)
                var now: Date? = nil
                for try await (next, clock) in rows.decode((Date, Date).self) {
                    if jobRate != nil { nexts.append(next) }
                    now = clock
                }
                guard let now else { return .taken(wait: .zero) }
                let start = max(nexts.max() ?? now, now)
                let wait = Duration.microseconds(Int64((start.timeIntervalSince(now) * 1_000_000).rounded()))
                guard wait <= window else { return .later(wait: wait) }
                if let appRate {
                    let next = start.addingTimeInterval(Double(count) / Double(max(appRate, 1)))
                    try await connection.query(
                        "UPDATE app_send_rates SET next_at = \(next) WHERE app_id = \(job.app)", logger: logger)
                }
                if let jobRate {
                    let next = start.addingTimeInterval(Double(count) / Double(max(jobRate, 1)))
                    try await connection.query(
                        "UPDATE jobs SET throttle_next_at = \(next) WHERE app_id = \(job.app) AND id = \(job.id)",
                        logger: logger)
                }
                return .taken(wait: wait)
            }
        }
    }
}

/// A batch's turn in its job's and its app's send rates (`Store.takeTurn`).
public enum ThrottleSlot: Sendable, Equatable {
    /// Taken: the batch's sends start after `wait`, which is within the window asked for.
    case taken(wait: Duration)
    /// Not taken: the rates are booked further ahead than the window; the batch's turn would start after `wait`.
    case later(wait: Duration)
}

// The statements of the batch lifecycle, for the store and for the tests that hold their plans to their indexes
// (QueryPlanTests).
extension Store {
    /// `beginBatch`: the job, and the batch row created or found.
    package static func beginBatchQuery(_ key: BatchKey) -> PostgresQuery {
        """
        WITH job AS (
            SELECT state, spec, published_at, throttle_per_second FROM jobs
            WHERE app_id = \(key.app) AND id = \(key.job)),
        created AS (
            INSERT INTO batches (app_id, job_id, seq, attempt, state)
            SELECT \(key.app), \(key.job), \(key.seq), \(key.attempt), 'pending' WHERE EXISTS (SELECT 1 FROM job)
            ON CONFLICT DO NOTHING RETURNING state)
        SELECT coalesce((SELECT state FROM created), b.state),
               j.state, j.spec::text, (extract(epoch FROM j.published_at) * 1000)::bigint, j.throttle_per_second,
               b.settled, b.settled_through, b.held_retries
        FROM job j
        LEFT JOIN batches b ON b.app_id = \(key.app) AND b.job_id = \(key.job) AND b.seq = \(key.seq)
                           AND b.attempt = \(key.attempt)
        """
    }

    /// `complete`: marks still-pending batches done with their counts; returns those it claimed. `items` sorted.
    package static func claimBatchesQuery(_ items: [BatchCompletion]) -> PostgresQuery {
        """
        UPDATE batches b SET state = 'done', completed_at = now(), sent = b.sent + i.sent,
            failed = b.failed + i.failed, retried = b.retried + i.retried, expired = b.expired + i.expired
        FROM unnest(\(items.map(\.key.app))::text[], \(items.map(\.key.job))::text[],
                    \(items.map(\.key.seq))::integer[], \(items.map(\.key.attempt))::integer[],
                    \(items.map(\.writeBack.sent))::integer[],
                    \(items.map { $0.writeBack.failures.count + $0.writeBack.rejectedTokens })::integer[],
                    \(items.map(\.writeBack.retried))::integer[], \(items.map(\.writeBack.expired))::integer[])
            AS i(app_id, job_id, seq, attempt, sent, failed, retried, expired)
        -- driven from the unnest: one primary-key probe per batch (with `job_id = ANY(…)` as well, the
        -- planner put the pending batches outside and rescanned the unnest for each: quadratic). `<> 'done'`, not
        -- `= 'pending'` (the same, as state is one or the other): that matched the partial index batches_pending,
        -- which the planner preferred for its size, reading every pending batch of the job per probe, or walking
        -- all of them once per batch with statistics taken while the table was nearly empty.
        WHERE b.app_id = i.app_id AND b.job_id = i.job_id AND b.seq = i.seq AND b.attempt = i.attempt
          AND b.state <> 'done'
        RETURNING b.app_id, b.job_id, b.seq, b.attempt
        """
    }

    /// `complete`: a batch's pruned count, for a batch with dead tokens.
    package static func batchPrunedQuery(_ key: BatchKey, pruned: Int) -> PostgresQuery {
        """
        UPDATE batches SET pruned = pruned + \(pruned)
        WHERE app_id = \(key.app) AND job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt)
        """
    }

    /// `complete`: the retry batches of transient failures, pending.
    package static func retryBatchesQuery(_ retries: [BatchKey]) -> PostgresQuery {
        """
        INSERT INTO batches (app_id, job_id, seq, attempt, state)
        SELECT app_id, job_id, seq, attempt, 'pending'
        FROM unnest(\(retries.map(\.app))::text[], \(retries.map(\.job))::text[],
                    \(retries.map(\.seq))::integer[], \(retries.map(\.attempt))::integer[])
            AS r(app_id, job_id, seq, attempt)
        ON CONFLICT DO NOTHING
        """
    }

    /// `complete`: adds each job's counts.
    package static func addCountsQuery(_ sums: [WriteBack]) -> PostgresQuery {
        """
        UPDATE jobs j SET targeted = j.targeted + i.targeted, sent = j.sent + i.sent,
            failed = j.failed + i.failed, expired = j.expired + i.expired, retried = j.retried + i.retried
        FROM unnest(\(sums.map(\.app))::text[], \(sums.map(\.jobID))::text[], \(sums.map(\.targeted))::bigint[],
                    \(sums.map(\.sent))::bigint[], \(sums.map(\.rejectedTokens))::bigint[],
                    \(sums.map(\.expired))::bigint[], \(sums.map(\.retried))::bigint[])
            AS i(app_id, id, targeted, sent, failed, expired, retried)
        WHERE j.app_id = i.app_id AND j.id = i.id
        """
    }

    /// `recordPlanned`: the batch row, then the cursor moved past it (only while the job runs).
    package static func recordPlannedQueries(_ key: BatchKey, cursor: String?) -> (
        batch: PostgresQuery, cursor: PostgresQuery
    ) {
        let batch: PostgresQuery = """
            INSERT INTO batches (app_id, job_id, seq, attempt, state)
            VALUES (\(key.app), \(key.job), \(key.seq), \(key.attempt), 'pending')
            ON CONFLICT DO NOTHING
            """
        let moved: PostgresQuery = """
            UPDATE jobs SET plan_cursor = \(cursor), batches = greatest(batches, \(key.seq + 1))
            WHERE app_id = \(key.app) AND id = \(key.job) AND state = 'running' RETURNING 1
            """
        return (batch, moved)
    }
}
