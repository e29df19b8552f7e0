import HeraldCore
import Logging
import PostgresNIO

/// How far a batch's delivery got before: its committed slices (schemas/032).
public struct BatchProgress: Sendable, Hashable {
    /// Devices whose outcome is committed.
    public var settled: Int
    /// The last of them, for a batch read from the audience (in token order).
    public var settledThrough: String?
    /// Tokens that failed transiently in committed slices, held for the batch's retry.
    public var heldRetries: [String]

    public init(settled: Int = 0, settledThrough: String? = nil, heldRetries: [String] = []) {
        self.settled = settled
        self.settledThrough = settledThrough
        self.heldRetries = heldRetries
    }
}

/// One slice of a batch, committed while the batch goes on: its write-back (counts, dead tokens, failures, first
/// deliveries), the devices it settled and the last of them, and its transient failures, held for the retry.
public struct SliceCommit: Sendable {
    public var key: BatchKey
    public var writeBack: WriteBack
    public var settled: Int
    public var settledThrough: String?
    public var held: [String]

    public init(key: BatchKey, writeBack: WriteBack, settled: Int, settledThrough: String?, held: [String]) {
        self.key = key
        self.writeBack = writeBack
        self.settled = settled
        self.settledThrough = settledThrough
        self.held = held
    }
}

extension Store {
    /// The batch's progress: what its earlier deliveries committed (nothing for a new batch).
    public func batchProgress(_ key: BatchKey) async throws(StoreError) -> BatchProgress {
        try await run("reading a batch's progress") {
            let rows = try await client.query(
                """
                SELECT settled, settled_through, held_retries FROM batches
                WHERE app_id = \(key.app) AND job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt)
                """,
                logger: logger)
            for try await (settled, through, held) in rows.decode((Int, String?, [String]).self) {
                return BatchProgress(settled: settled, settledThrough: through, heldRetries: held)
            }
            return BatchProgress()
        }
    }

    /// Commits one slice of a batch still pending, in one transaction: its progress and counts on the batch row,
    /// then (only when it has them) its dead tokens and failures and its first deliveries, then its counts on the
    /// job. Returns false, writing nothing, if the batch is no longer pending (another delivery completed it).
    public func commitSlice(_ slice: SliceCommit) async throws(StoreError) -> Bool {
        let key = slice.key
        let writeBack = slice.writeBack
        if writeBack.prunes.isEmpty && writeBack.failures.isEmpty && writeBack.delivered.isEmpty {
            // The usual slice: counts only, in one prepared statement (one round trip, its own transaction).
            return try await run("committing a batch's slice") {
                for try await _ in try await client.execute(CommitSliceCounts(slice), logger: logger) { return true }
                return false
            }
        }
        return try await run("committing a batch's slice") {
            try await client.withTransaction(logger: logger) { connection in
                let rows = try await connection.query(
                    """
                    UPDATE batches SET settled = settled + \(slice.settled),
                        settled_through = coalesce(\(slice.settledThrough), settled_through),
                        held_retries = held_retries || \(slice.held)::text[],
                        sent = sent + \(writeBack.sent),
                        failed = failed + \(writeBack.failures.count + writeBack.rejectedTokens),
                        expired = expired + \(writeBack.expired)
                    WHERE app_id = \(key.app) AND job_id = \(key.job) AND seq = \(key.seq) AND attempt = \(key.attempt)
                      AND state = 'pending'
                    RETURNING 1
                    """,
                    logger: logger)
                var pending = false
                for try await _ in rows { pending = true }
                guard pending else { return false }
                // As `complete` writes a batch: the full write-back (its counts on the job with it) only when there are
                // dead tokens or failures to record, else the counts alone.
                if !writeBack.prunes.isEmpty || !writeBack.failures.isEmpty {
                    let pruned = try await Self.write(writeBack, on: connection, logger: logger)
                    if pruned > 0 {
                        try await connection.query(Self.batchPrunedQuery(key, pruned: pruned), logger: logger)
                    }
                } else {
                    try await connection.query(Self.addCountsQuery([writeBack]), logger: logger)
                }
                if !writeBack.delivered.isEmpty {
                    try await Self.markDelivered(
                        app: writeBack.app, tokens: writeBack.delivered, on: connection, logger: logger)
                }
                return true
            }
        }
    }
}

/// `Store.commitSlice` for a slice with counts only: the batch's progress and counts, then the job's counts, in one
/// statement, prepared once per connection (a broadcast commits hundreds of slices).
private struct CommitSliceCounts: PostgresPreparedStatement {
    static let name = "herald_commit_slice_counts_v1"
    static let sql = """
        WITH slice AS (
            UPDATE batches SET settled = settled + $5, settled_through = coalesce($6, settled_through),
                held_retries = held_retries || $7::text[], sent = sent + $8, failed = failed + $9,
                expired = expired + $10
            WHERE app_id = $1 AND job_id = $2 AND seq = $3 AND attempt = $4 AND state = 'pending'
            RETURNING 1)
        UPDATE jobs SET targeted = targeted + $11, sent = sent + $8, failed = failed + $9, expired = expired + $10,
            retried = retried + $12
        WHERE app_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM slice)
        RETURNING 1
        """
    typealias Row = Int

    let slice: SliceCommit

    init(_ slice: SliceCommit) { self.slice = slice }

    func makeBindings() throws -> PostgresBindings {
        let writeBack = slice.writeBack
        var bindings = PostgresBindings(capacity: 12)
        bindings.append(slice.key.app)
        bindings.append(slice.key.job)
        bindings.append(Int32(slice.key.seq))
        bindings.append(Int32(slice.key.attempt))
        bindings.append(Int32(slice.settled))
        bindings.append(slice.settledThrough)
        bindings.append(slice.held)
        bindings.append(Int64(writeBack.sent))
        bindings.append(Int64(writeBack.rejectedTokens))
        bindings.append(Int64(writeBack.expired))
        bindings.append(Int64(writeBack.targeted))
        bindings.append(Int64(writeBack.retried))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}
