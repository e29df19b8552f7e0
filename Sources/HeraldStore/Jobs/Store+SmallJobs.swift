import HeraldCore
import Logging
import PostgresNIO
import Synchronization

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
    /// The lock space of the advisory locks that claim small jobs (each lock is the 64-bit
    /// `herald_job_lock_key(space, app, id)`, schemas/027): "HRLD".
    static let smallJobLockSpace: Int32 = 0x4852_4C44

    /// Delivers a group of small jobs with one write per job. In one transaction: claims each job that is new (or
    /// that the API enqueued and no worker has touched) with a transaction-level advisory lock on its (app, id),
    /// runs `deliver` with the jobs claimed, and writes the row of each job `deliver` returns — done with its
    /// counts, or running for the exceptions — in one statement. A job's row appears only once it was sent; until
    /// the commit the lock keeps any other claim or registration of the same job waiting (`register`) or off (a
    /// concurrent claim). Jobs not claimed exist already (or another group holds them) and take the one-by-one
    /// path, which knows about duplicates, schedules and resumption.
    ///
    /// If the worker dies before the commit, nothing of the group was written and its messages come back: they
    /// are sent again, as a batch in flight is. Errors of `deliver` and of the write are thrown (roll back); a
    /// claim that fails is `.notClaimed`. Never retried here: `deliver` has sent.
    public func claimSmallJobs<Value: Sendable>(
        _ jobs: [JobKey],
        deliver: @escaping @Sendable (Set<JobKey>) async throws -> (Value, [SmallJobRow])
    ) async throws -> SmallJobClaim<Value> {
        let progress = ClaimProgress<Value>()
        let (client, logger) = (self.client, self.logger)
        do {
            let (value, ended) = try await abandoningIfStalled("claiming small jobs") {
                try await client.withTransaction(logger: logger) { connection in
                    let claimed: Set<JobKey>
                    do {
                        claimed = try await Self.claim(jobs, on: connection, logger: logger)
                    } catch {
                        progress.update { $0.claimFailure = Self.storeError(error, what: "claiming small jobs") }
                        throw error
                    }
                    // Once the caller gave up on the claim (a stall abandoned it), it takes the jobs one by one:
                    // this claim must not send them too.
                    guard progress.startSending() else { throw CancellationError() }
                    // The sends run in a task of their own (where the caller prefers to run, as the statement does):
                    // a stall watchdog that gives up on the claim (an outage under it) cancels the transaction, not
                    // notifications on their way; the caller waits for them and writes their rows once the database
                    // is back.
                    let sending = Task(executorPreference: ExecutorPreference.current) { try await deliver(claimed) }
                    progress.update { $0.sends = sending }
                    let (value, rows) = try await sending.value
                    progress.update { $0.delivered = (value, rows) }
                    do {
                        let ended = try await Self.endJobs(EndJobs(group: rows), on: connection, logger: logger)
                        return (value, ended)
                    } catch {
                        throw Self.storeError(error, what: "writing small jobs")
                    }
                }
            }
            metrics.ended(ended)
            return .delivered(value)
        } catch {
            let state = progress.giveUp()
            if let claimFailure = state.claimFailure { return .notClaimed(claimFailure) }
            if let (value, rows) = state.delivered {
                return .deliveredNotWritten(value, rows, Self.storeError(error, what: "writing small jobs"))
            }
            // Lost before anything was sent (the transaction could not begin, or stalled in the claim).
            guard state.sending else { return .notClaimed(Self.storeError(error, what: "claiming small jobs")) }
            // Given up on while sending: what is sent is not sent again, so the sends are waited for and their rows
            // left to the caller. (Sends that failed themselves are thrown below.)
            if state.sends != nil, !(error is PostgresTransactionError) {  // given up on, not failed in the sends
                logger.warning(
                    "a group's claim was given up on while it was sending, waiting for its sends",
                    metadata: ["error": "\(Self.storeError(error, what: "claiming small jobs"))"])
            }
            if let sends = state.sends, let (value, rows) = try? await sends.value {
                return .deliveredNotWritten(value, rows, Self.storeError(error, what: "writing small jobs"))
            }
            if let transaction = error as? PostgresTransactionError, let failure = transaction.closureError {
                throw failure
            }
            throw error
        }
    }

    /// Writes small jobs' rows outside a claim: for a group that was sent but whose claim could not write them.
    /// A row whose job another delivery wrote meanwhile is left as that one wrote it.
    public func writeSmallJobs(_ rows: [SmallJobRow]) async throws(StoreError) {
        try await endJobs(EndJobs(group: rows), "writing small jobs")
    }

    /// Locks the jobs (without waiting) and drops those that another group holds or whose row exists and is not
    /// merely enqueued: one call of `herald_claim_small_jobs` (schemas/007), whose second query's snapshot sees
    /// every commit of an earlier holder of a lock. Only the jobs dropped come back (usually none).
    private static func claim(_ jobs: [JobKey], on connection: PostgresConnection, logger: Logger) async throws
        -> Set<JobKey>
    {
        var claimed = Set(jobs)
        let dropped = try await connection.query(
            """
            SELECT job_app, job_id FROM herald_claim_small_jobs(\(jobs.map(\.app))::text[], \(jobs.map(\.id))::text[],
                                                               \(smallJobLockSpace))
            """,
            logger: logger)
        for try await (app, id) in dropped.decode((String, String).self) { claimed.remove(JobKey(app: app, id: id)) }
        return claimed
    }

    /// Completes small jobs left running by `claimSmallJobs`, in one statement for those with only counts to write:
    /// each job gets its counts, and a running one becomes done. A job that was stopped meanwhile (failed by
    /// `failJob` when APNs rejected it as a whole, or cancelled) keeps its state but still gets the counts of what
    /// was sent; only the jobs this call marked done are in `finished`. A job that has a batch row meanwhile (a
    /// redelivery took the one-by-one path) is left to that path. Completions with dead tokens, failures to record
    /// or a retry batch (the exception) get their batch row and go through `complete(_:)`.
    public func completeSmallJobs(_ completions: [BatchCompletion]) async throws(StoreError) -> CompletedBatches {
        var plain: [JobKey: BatchCompletion] = [:]
        var full: [BatchCompletion] = []
        for completion in completions {
            let writeBack = completion.writeBack
            if writeBack.prunes.isEmpty && writeBack.failures.isEmpty && completion.retry == nil {
                if plain[completion.key.jobKey] == nil { plain[completion.key.jobKey] = completion }
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
                    INSERT INTO batches (app_id, job_id, seq, attempt, state)
                    SELECT k.app_id, k.job_id, k.seq, k.attempt, 'pending'
                    FROM unnest(\(keys.map(\.app))::text[], \(keys.map(\.job))::text[], \(keys.map(\.seq))::integer[],
                                \(keys.map(\.attempt))::integer[]) AS k(app_id, job_id, seq, attempt)
                    WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.app_id = k.app_id AND j.id = k.job_id AND j.state = 'running')
                    ON CONFLICT DO NOTHING
                    """,
                    logger: logger
                )
            }
            result = try await complete(full)
        }
        guard !plain.isEmpty else { return result }
        // Sorted, so that concurrent completions lock job rows in the same order.
        let items = plain.values.sorted { $0.key.jobKey < $1.key.jobKey }
        let statement = EndJobs(
            .counted,
            items.map {
                EndJobs.Item(key: $0.key.jobKey, counts: EndJobs.Counts($0.writeBack))
            })
        var written: [JobKey: JobState] = [:]
        for job in try await endJobs(statement, "completing small jobs") {
            if let key = job.key { written[key] = job.state }
        }
        for item in items {
            guard let state = written[item.key.jobKey] else { continue }
            result.pruned[item.key] = 0
            // Only a running job became done here; a stopped one was finished by whoever stopped it.
            if state == .done { result.finished[item.key.jobKey] = .done }
        }
        return result
    }
}

/// How far a claim of small jobs got, for what to do when it fails.
private final class ClaimProgress<Value: Sendable>: Sendable {
    struct State {
        var claimFailure: StoreError?
        var sending = false
        /// The sends, once started.
        var sends: Task<(Value, [SmallJobRow]), any Error>?
        var delivered: (Value, [SmallJobRow])?
        /// The caller has given up on the claim: it does not send any more.
        var givenUp = false
    }

    private let mutex = Mutex(State())

    func update(_ change: (inout State) -> Void) { mutex.withLock { change(&$0) } }

    /// Before sending: false if the caller has given up on the claim already (then nothing is sent).
    func startSending() -> Bool {
        mutex.withLock { state in
            guard !state.givenUp else { return false }
            state.sending = true
            return true
        }
    }

    /// When the claim failed, or was abandoned: what it got to. From now on it does not start sending, so a claim
    /// that had not started is safe to take one by one.
    func giveUp() -> State {
        mutex.withLock { state in
            state.givenUp = true
            return state
        }
    }
}
