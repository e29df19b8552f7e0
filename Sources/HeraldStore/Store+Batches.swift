import APNSCore
import HeraldCore
import Logging
import PostgresNIO
import Synchronization

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
    public var finished: [String: JobState] = [:]

    public init() {}
}

/// A small job's row, written once by the group that delivered it (`Store.claimSmallJobs`).
public struct SmallJobRow: Sendable {
    public var id: String
    public var app: String
    /// The job as published (JSON): kept only for a job left running, whose retry batch reads it again.
    public var spec: String
    /// When the producer published it (ms since 1970).
    public var publishedAt: Int64
    /// How many tokens it lists: its plan cursor.
    public var tokenCount: Int
    /// Its counts when it is done; nil leaves it running (fully planned, one batch and no batch row), for
    /// `completeSmallJobs` to finish (dead tokens, failures to record, a retry) or for a stop.
    public var done: WriteBack?

    public init(id: String, app: String, spec: String, publishedAt: Int64, tokenCount: Int, done: WriteBack?) {
        self.id = id
        self.app = app
        self.spec = spec
        self.publishedAt = publishedAt
        self.tokenCount = tokenCount
        self.done = done
    }
}

/// What `Store.claimSmallJobs` did.
public enum SmallJobClaim<Value: Sendable>: Sendable {
    /// The claim was made and `deliver` ran; its rows are committed.
    case delivered(Value)
    /// The claim could not be made (nothing was delivered or written): take the jobs one by one.
    case notClaimed(StoreError)
    /// `deliver` ran (its notifications are out), but its rows were not written: the write or the commit failed
    /// and the transaction rolled back. Write them with `writeSmallJobs` rather than deliver again.
    case deliveredNotWritten(Value, [SmallJobRow], StoreError)
}

extension Store {
    /// The first key of the advisory locks that claim small jobs (the second is the id's hash): "HRLD".
    static let smallJobLockSpace: Int32 = 0x4852_4C44

    /// Delivers a group of small jobs with one write per job. In one transaction: claims each id that is new (or
    /// that the API enqueued and no worker has touched) with a transaction-level advisory lock, runs `deliver` with
    /// the ids claimed, and writes the row of each job `deliver` returns — done with its counts, or running for
    /// the exceptions — in one statement. A job's row appears only once it was sent; until the commit the lock
    /// keeps any other claim or registration of the same id waiting (`register`) or off (a concurrent claim).
    /// Ids not claimed exist already (or another group holds them) and take the one-by-one path, which knows about
    /// duplicates, schedules and resumption.
    ///
    /// If the worker dies before the commit, nothing of the group was written and its messages come back: they
    /// are sent again, as a batch in flight is. Errors of `deliver` and of the write are thrown (roll back); a
    /// claim that fails is `.notClaimed`. Never retried here: `deliver` has sent.
    public func claimSmallJobs<Value: Sendable>(
        _ ids: [String],
        deliver: @escaping @Sendable (Set<String>) async throws -> (Value, [SmallJobRow])
    ) async throws -> SmallJobClaim<Value> {
        let progress = ClaimProgress<Value>()
        let (client, logger) = (self.client, self.logger)
        do {
            let value = try await abandoningIfStalled("claiming small jobs") {
                try await client.withTransaction(logger: logger) { connection in
                    let claimed: Set<String>
                    do {
                        claimed = try await Self.claim(ids, on: connection, logger: logger)
                    } catch {
                        progress.update { $0.claimFailure = Self.storeError(error, what: "claiming small jobs") }
                        throw error
                    }
                    progress.update { $0.sending = true }
                    let (value, rows) = try await deliver(claimed)
                    progress.update { $0.delivered = (value, rows) }
                    guard !rows.isEmpty else { return value }
                    do {
                        for try await _ in try await connection.execute(WriteSmallJobs(rows), logger: logger) {}
                    } catch {
                        throw Self.storeError(error, what: "writing small jobs")
                    }
                    return value
                }
            }
            return .delivered(value)
        } catch {
            let state = progress.state
            if let claimFailure = state.claimFailure { return .notClaimed(claimFailure) }
            if let (value, rows) = state.delivered {
                return .deliveredNotWritten(value, rows, Self.storeError(error, what: "writing small jobs"))
            }
            // Lost before anything was sent (the transaction could not begin, or stalled in the claim).
            guard state.sending else { return .notClaimed(Self.storeError(error, what: "claiming small jobs")) }
            if let transaction = error as? PostgresTransactionError, let failure = transaction.closureError {
                throw failure
            }
            throw error
        }
    }

    /// Writes small jobs' rows outside a claim: for a group that was sent but whose claim could not write them.
    /// A row whose job another delivery wrote meanwhile is left as that one wrote it.
    public func writeSmallJobs(_ rows: [SmallJobRow]) async throws(StoreError) {
        guard !rows.isEmpty else { return }
        try await run("writing small jobs") {
            for try await _ in try await client.execute(WriteSmallJobs(rows), logger: logger) {}
        }
    }

    /// Locks the ids (without waiting) and drops those that another group holds or whose row exists and is not
    /// merely enqueued: one call of `herald_claim_small_jobs` (schemas/005), whose second query's snapshot sees
    /// every commit of an earlier holder of a lock. Only the ids dropped come back (usually none).
    private static func claim(_ ids: [String], on connection: PostgresConnection, logger: Logger) async throws
        -> Set<String>
    {
        var claimed = Set(ids)
        let dropped = try await connection.query(
            "SELECT herald_claim_small_jobs(\(ids)::text[], \(smallJobLockSpace))", logger: logger)
        for try await id in dropped.decode(String.self) { claimed.remove(id) }
        return claimed
    }

    /// Completes small jobs left running by `claimSmallJobs`, in one statement for those with only counts to write: each
    /// job gets its counts, and a running one becomes done. A job that was stopped meanwhile (failed by `failJob`
    /// when APNs rejected it as a whole, or cancelled) keeps its state but still gets the counts of what was sent;
    /// only the jobs this call marked done are in `finished`. A job that has a batch row meanwhile (a redelivery
    /// took the one-by-one path) is left to that path. Completions with dead tokens, failures to record or a retry
    /// batch (the exception) get their batch row and go through `complete(_:)`.
    public func completeSmallJobs(_ completions: [BatchCompletion]) async throws(StoreError) -> CompletedBatches {
        var plain: [String: BatchCompletion] = [:]
        var full: [BatchCompletion] = []
        for completion in completions {
            let writeBack = completion.writeBack
            if writeBack.prunes.isEmpty && writeBack.failures.isEmpty && completion.retry == nil {
                if plain[completion.key.job] == nil { plain[completion.key.job] = completion }
            } else {
                full.append(completion)
            }
        }
        var result = CompletedBatches()
        if !full.isEmpty {
            let keys = full.map(\.key)
            try await run("creating small jobs' batches") {
                try await client.query(
                    """
                    INSERT INTO batches (job_id, seq, attempt, state)
                    SELECT k.job_id, k.seq, k.attempt, 'pending'
                    FROM unnest(\(keys.map(\.job))::text[], \(keys.map(\.seq))::integer[], \(keys.map(\.attempt))::integer[])
                        AS k(job_id, seq, attempt)
                    WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = k.job_id AND j.state = 'running')
                    ON CONFLICT DO NOTHING
                    """,
                    logger: logger
                )
            }
            result = try await complete(full)
        }
        guard !plain.isEmpty else { return result }
        // Sorted, so that concurrent completions lock job rows in the same order.
        let items = plain.values.sorted { $0.key.job < $1.key.job }
        let ids = items.map(\.key.job)
        let sums = items.map(\.writeBack)
        let statement = CompleteSmallJobs(
            ids: ids, targeted: sums.map { Int64($0.targeted) }, sent: sums.map { Int64($0.sent) },
            failed: sums.map { Int64($0.rejectedTokens) }, expired: sums.map { Int64($0.expired) },
            retried: sums.map { Int64($0.retried) }
        )
        let written = try await run("completing small jobs") {
            var written: [String: JobState] = [:]
            for try await (id, state) in try await client.execute(statement, logger: logger) {
                written[id] = JobState(rawValue: state) ?? .failed
            }
            return written
        }
        for item in items {
            guard let state = written[item.key.job] else { continue }
            result.pruned[item.key] = 0
            // Only a running job became done here; a stopped one was finished by whoever stopped it.
            if state == .done { result.finished[item.key.job] = .done }
        }
        return result
    }

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
        let completed = try await complete([BatchCompletion(key: key, writeBack: writeBack, retry: retry)])
        guard let pruned = completed.pruned[key] else { return nil }
        return (pruned, completed.finished[key.job])
    }

    /// Completes many batches (of any jobs) in one transaction and a handful of statements, whatever their number:
    /// what the worker does for a group of small jobs. Each batch is claimed only if still pending; the results of
    /// the others are not written (another delivery finished them first).
    public func complete(_ completions: [BatchCompletion]) async throws(StoreError) -> CompletedBatches {
        var unique: [BatchKey: BatchCompletion] = [:]
        for completion in completions where unique[completion.key] == nil { unique[completion.key] = completion }
        // Sorted, so that concurrent group completions lock batch and job rows in the same order.
        let items = unique.values.sorted {
            ($0.key.job, $0.key.seq, $0.key.attempt) < ($1.key.job, $1.key.seq, $1.key.attempt)
        }
        guard !items.isEmpty else { return CompletedBatches() }
        return try await run("completing batches") {
            try await client.withTransaction(logger: logger) { connection in
                let claimedRows = try await connection.query(
                    """
                    UPDATE batches b SET state = 'done', completed_at = now(), sent = i.sent, failed = i.failed,
                        retried = i.retried, expired = i.expired
                    FROM unnest(\(items.map(\.key.job))::text[], \(items.map(\.key.seq))::integer[],
                                \(items.map(\.key.attempt))::integer[], \(items.map(\.writeBack.sent))::integer[],
                                \(items.map { $0.writeBack.failures.count + $0.writeBack.rejectedTokens })::integer[],
                                \(items.map(\.writeBack.retried))::integer[], \(items.map(\.writeBack.expired))::integer[])
                        AS i(job_id, seq, attempt, sent, failed, retried, expired)
                    -- driven from the unnest: one primary-key probe per batch (with `job_id = ANY(…)` as well, the
                    -- planner put the pending batches outside and rescanned the unnest for each: quadratic)
                    WHERE b.job_id = i.job_id AND b.seq = i.seq AND b.attempt = i.attempt AND b.state = 'pending'
                    RETURNING b.job_id, b.seq, b.attempt
                    """,
                    logger: logger
                )
                var claimed = Set<BatchKey>()
                for try await (job, seq, attempt) in claimedRows.decode((String, Int, Int).self) {
                    claimed.insert(BatchKey(job: job, seq: seq, attempt: attempt))
                }
                let mine = items.filter { claimed.contains($0.key) }
                guard !mine.isEmpty else { return CompletedBatches() }

                var result = CompletedBatches()
                // Every claimed job gets one row below: the counts of its batches that had only counts, summed.
                var counts: [String: WriteBack] = [:]
                for item in mine {
                    let writeBack = item.writeBack
                    var sum = counts[writeBack.jobID] ?? WriteBack(jobID: writeBack.jobID, app: writeBack.app)
                    if writeBack.prunes.isEmpty && writeBack.failures.isEmpty {
                        sum.add(writeBack)
                        result.pruned[item.key] = 0
                    } else {
                        // Dead tokens and failures to record: the full write-back, per batch (the exception).
                        let pruned = try await Self.write(writeBack, on: connection, logger: logger)
                        if pruned > 0 {
                            try await connection.query(
                                """
                                UPDATE batches SET pruned = \(pruned)
                                WHERE job_id = \(item.key.job) AND seq = \(item.key.seq) AND attempt = \(item.key.attempt)
                                """,
                                logger: logger
                            )
                        }
                        result.pruned[item.key] = pruned
                    }
                    counts[writeBack.jobID] = sum
                }
                let retries = mine.compactMap(\.retry)
                if !retries.isEmpty {
                    try await connection.query(
                        """
                        INSERT INTO batches (job_id, seq, attempt, state)
                        SELECT job_id, seq, attempt, 'pending'
                        FROM unnest(\(retries.map(\.job))::text[], \(retries.map(\.seq))::integer[], \(retries.map(\.attempt))::integer[])
                            AS r(job_id, seq, attempt)
                        ON CONFLICT DO NOTHING
                        """,
                        logger: logger
                    )
                }
                let sums = counts.values.sorted { $0.jobID < $1.jobID }
                result.finished = try await Self.addCountsAndFinish(sums, on: connection, logger: logger)
                return result
            }
        }
    }

    /// Adds each job's counts, then finishes those that are running, fully planned and have no pending batch left.
    /// Returns the jobs finished.
    ///
    /// Two statements on purpose: the first locks the job rows, so that the second reads the pending batches with
    /// a snapshot taken after every other completion of the same jobs has committed. (In one statement the pending
    /// batches would be read before waiting for the lock, and two workers completing a job's last two batches at
    /// once would each see the other's as pending: the job would never finish.)
    private static func addCountsAndFinish(_ sums: [WriteBack], on connection: PostgresConnection, logger: Logger)
        async throws -> [String: JobState]
    {
        let ids = sums.map(\.jobID)
        try await connection.query(
            """
            UPDATE jobs j SET targeted = j.targeted + i.targeted, sent = j.sent + i.sent,
                failed = j.failed + i.failed, expired = j.expired + i.expired, retried = j.retried + i.retried
            FROM unnest(\(ids)::text[], \(sums.map(\.targeted))::bigint[], \(sums.map(\.sent))::bigint[],
                        \(sums.map(\.rejectedTokens))::bigint[], \(sums.map(\.expired))::bigint[], \(sums.map(\.retried))::bigint[])
                AS i(id, targeted, sent, failed, expired, retried)
            WHERE j.id = i.id
            """,
            logger: logger
        )
        return try await finishIfComplete(jobs: ids, on: connection, logger: logger)
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

    private static func finishIfComplete(job: String, on connection: PostgresConnection, logger: Logger) async throws
        -> JobState?
    {
        try await finishIfComplete(jobs: [job], on: connection, logger: logger)[job]
    }

    /// Finishes each of `jobs` that is running, fully planned and has no pending batch left; returns those finished.
    private static func finishIfComplete(jobs: [String], on connection: PostgresConnection, logger: Logger) async throws
        -> [String: JobState]
    {
        let rows = try await connection.query(
            """
            WITH still_pending AS (
                -- read once through the index for all the jobs, not once per job (an anti-join the planner may
                -- turn into a scan of every pending batch per job)
                SELECT DISTINCT job_id FROM batches WHERE job_id = ANY(\(jobs)) AND state = 'pending'),
            with_batch_rows AS (
                SELECT u.id FROM unnest(\(jobs)::text[]) AS u(id) WHERE EXISTS (SELECT 1 FROM batches b WHERE b.job_id = u.id))
            UPDATE jobs j SET state = 'done', finished_at = now()
            WHERE j.id = ANY(\(jobs)) AND j.state = 'running' AND j.planned
              AND j.id NOT IN (SELECT job_id FROM still_pending)
              -- a small job started in a group has a batch but no batch row: only its own completion finishes it
              AND (j.batches = 0 OR j.id IN (SELECT id FROM with_batch_rows))
            RETURNING j.id, j.state
            """,
            logger: logger
        )
        var finished: [String: JobState] = [:]
        for try await (id, state) in rows.decode((String, String).self) {
            finished[id] = JobState(rawValue: state) ?? .done
        }
        return finished
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
    public func incrementBadges(app: String, tokens: [DeviceToken], by increment: Int) async throws(StoreError)
        -> [String: Int]
    {
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

// The two statements of every group of small jobs, prepared once per connection: parsing and planning them anew
// each time was about a third of the database's time per group.

/// `Store.claimSmallJobs`: the group's rows, each new or taking over the row the API enqueued (a cancel that came
/// first keeps its state).
private struct WriteSmallJobs: PostgresPreparedStatement {
    static let name = "herald_write_small_jobs_v1"
    static let sql = """
        INSERT INTO jobs AS j (id, app_id, state, target_kind, spec, published_at, started_at, finished_at, planned,
                               batches, plan_cursor, targeted, sent, failed, expired, retried)
        SELECT i.id, i.app, CASE WHEN i.done THEN 'done' ELSE 'running' END, 'tokens', nullif(i.spec, '')::jsonb,
               to_timestamp(i.published / 1000.0), now(), CASE WHEN i.done THEN clock_timestamp() END, true, 1,
               i.cursor, i.targeted, i.sent, i.failed, i.expired, i.retried
        FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::boolean[], $7::bigint[],
                    $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
            AS i(id, app, spec, published, cursor, done, targeted, sent, failed, expired, retried)
        ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, started_at = EXCLUDED.started_at,
            finished_at = EXCLUDED.finished_at, planned = true, batches = 1, plan_cursor = EXCLUDED.plan_cursor,
            targeted = EXCLUDED.targeted, sent = EXCLUDED.sent, failed = EXCLUDED.failed, expired = EXCLUDED.expired,
            retried = EXCLUDED.retried
        WHERE j.state = 'queued'
        """
    typealias Row = ()

    let rows: [SmallJobRow]

    init(_ rows: [SmallJobRow]) { self.rows = rows }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 11)
        bindings.append(rows.map(\.id))
        bindings.append(rows.map(\.app))
        // A done job's spec is not kept: nothing reads it again.
        bindings.append(rows.map { $0.done == nil ? $0.spec : "" })
        bindings.append(rows.map(\.publishedAt))
        bindings.append(rows.map { String($0.tokenCount) })
        bindings.append(rows.map { $0.done != nil })
        bindings.append(rows.map { Int64($0.done?.targeted ?? 0) })
        bindings.append(rows.map { Int64($0.done?.sent ?? 0) })
        bindings.append(rows.map { Int64($0.done?.rejectedTokens ?? 0) })
        bindings.append(rows.map { Int64($0.done?.expired ?? 0) })
        bindings.append(rows.map { Int64($0.done?.retried ?? 0) })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { () }
}

/// `Store.completeSmallJobs`: adds each job's counts and marks the running ones done (stopped ones keep their state),
/// unless the job is already done or has batch rows (a redelivery took the one-by-one path). Returns the jobs it
/// wrote, with their state afterwards.
private struct CompleteSmallJobs: PostgresPreparedStatement {
    static let name = "herald_complete_small_jobs_v3"
    // Driven from the group's rows: one primary-key probe of jobs (and of batches, for the anti-join) per job.
    // An earlier form also had `j.id = ANY($1)`; the planner, estimating that almost no job is running, then took
    // the jobs found that way as the outer side of a nested loop and scanned the whole unnest for each of them:
    // quadratic in the group, about 80 µs a job for a group of 256.
    static let sql = """
        UPDATE jobs j SET state = CASE WHEN j.state = 'running' THEN 'done' ELSE j.state END,
            finished_at = CASE WHEN j.state = 'running' THEN now() ELSE j.finished_at END,
            targeted = j.targeted + i.targeted, sent = j.sent + i.sent, failed = j.failed + i.failed,
            expired = j.expired + i.expired, retried = j.retried + i.retried
        FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
            AS i(id, targeted, sent, failed, expired, retried)
        WHERE j.id = i.id
          AND j.state IN ('running', 'failed', 'cancelled')
          AND NOT EXISTS (SELECT 1 FROM batches b WHERE b.job_id = i.id)
        RETURNING j.id, j.state
        """
    typealias Row = (String, String)

    var ids: [String]
    var targeted: [Int64]
    var sent: [Int64]
    var failed: [Int64]
    var expired: [Int64]
    var retried: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(ids)
        bindings.append(targeted)
        bindings.append(sent)
        bindings.append(failed)
        bindings.append(expired)
        bindings.append(retried)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((String, String).self) }
}

/// How far a claim of small jobs got, for what to do when it fails.
private final class ClaimProgress<Value: Sendable>: Sendable {
    struct State {
        var claimFailure: StoreError?
        var sending = false
        var delivered: (Value, [SmallJobRow])?
    }

    private let mutex = Mutex(State())

    var state: State { mutex.withLock { $0 } }

    func update(_ change: (inout State) -> Void) { mutex.withLock { change(&$0) } }
}
