/// A slice of a job's audience, published to `herald.batches` so that many workers share one broadcast.
///
/// Either a key range of the job's audience (planned batches: devices with `after < token ≤ through`, read again
/// when delivered) or an explicit token list (retry batches carrying only the devices that failed transiently).
public struct BatchMessage: Sendable, Hashable, Codable {
    /// The job.
    public var job: String
    /// The batch's number within the job.
    public var seq: Int
    /// 1 for a planned batch, n for the n-th attempt of its transient failures.
    public var attempt: Int
    /// Exclusive lower bound of the token range.
    public var after: String?
    /// Inclusive upper bound of the token range.
    public var through: String?
    /// Explicit tokens (retry batches and small explicit targets).
    public var tokens: [String]?

    public init(
        job: String, seq: Int, attempt: Int, after: String? = nil, through: String? = nil, tokens: [String]? = nil
    ) {
        self.job = job
        self.seq = seq
        self.attempt = attempt
        self.after = after
        self.through = through
        self.tokens = tokens
    }

    /// The batch's identity, unique across attempts.
    public var key: BatchKey { BatchKey(job: job, seq: seq, attempt: attempt) }
}

/// Identifies one delivery of one batch.
public struct BatchKey: Sendable, Hashable, CustomStringConvertible {
    public var job: String
    public var seq: Int
    public var attempt: Int

    public init(job: String, seq: Int, attempt: Int) {
        self.job = job
        self.seq = seq
        self.attempt = attempt
    }

    public var description: String { "\(job)#\(seq).\(attempt)" }
}
