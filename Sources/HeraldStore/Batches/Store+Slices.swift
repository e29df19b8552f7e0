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
                let rows = try await connection.execute(SliceProgress(slice), logger: logger)
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

/// A slice's progress and counts on its batch row, if the batch is still pending: `Store.commitSlice`'s first
/// statement when the slice has dead tokens, failures or first deliveries to write in the same transaction.
private struct SliceProgress: PostgresPreparedStatement {
    static let name = "herald_slice_progress_v1"
    /// Shared with `CommitSliceCounts`, which runs it as its first part: $1–$4 the batch, $5–$7 the progress,
    /// $8–$10 the counts.
    static let update = """
        UPDATE batches SET settled = settled + $5, settled_through = coalesce($6, settled_through),
            held_retries = held_retries || $7::text[], sent = sent + $8, failed = failed + $9, expired = expired + $10
        WHERE app_id = $1 AND job_id = $2 AND seq = $3 AND attempt = $4 AND state = 'pending'
        RETURNING 1
        """
    static let sql = update
    typealias Row = Int

    let slice: SliceCommit

    init(_ slice: SliceCommit) { self.slice = slice }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 12)
        Self.bind(slice, into: &bindings)
        return bindings
    }

    /// The batch, the progress and the counts: $1–$10.
    static func bind(_ slice: SliceCommit, into bindings: inout PostgresBindings) {
        let writeBack = slice.writeBack
        bindings.append(slice.key.app)
        bindings.append(slice.key.job)
        bindings.append(Int32(slice.key.seq))
        bindings.append(Int32(slice.key.attempt))
        bindings.append(Int32(slice.settled))
        bindings.append(slice.settledThrough)
        bindings.append(slice.held)
        bindings.append(Int64(writeBack.sent))
        bindings.append(Int64(writeBack.failures.count + writeBack.rejectedTokens))
        bindings.append(Int64(writeBack.expired))
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}

/// `Store.commitSlice` for a slice with counts only: the batch's progress and counts (`SliceProgress`), then the
/// job's counts, in one statement, prepared once per connection (a broadcast commits hundreds of slices).
private struct CommitSliceCounts: PostgresPreparedStatement {
    static let name = "herald_commit_slice_counts_v2"
    static let sql = """
        WITH slice AS (\(SliceProgress.update))
        UPDATE jobs SET targeted = targeted + $11, sent = sent + $8, failed = failed + $9, expired = expired + $10,
            retried = retried + $12
        WHERE app_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM slice)
        RETURNING 1
        """
    typealias Row = Int

    let slice: SliceCommit

    init(_ slice: SliceCommit) { self.slice = slice }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 12)
        SliceProgress.bind(slice, into: &bindings)
        bindings.append(Int64(slice.writeBack.targeted))
        bindings.append(Int64(slice.writeBack.retried))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}
