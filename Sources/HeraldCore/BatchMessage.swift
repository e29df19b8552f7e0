/// A slice of a job's audience, published to `herald.batches` so that many workers share one broadcast.
///
/// Either a key range of the job's audience (planned batches: devices with `after < token ≤ through`, read again
/// when delivered) or an explicit token list (retry batches carrying only the devices that failed transiently).
public struct BatchMessage: Sendable, Hashable, Codable {
    /// The job's app. Nil only in messages published before job ids were scoped by app (schemas/007): the worker
    /// then delivers the batch if exactly one app has a job with its id.
    public var app: String?
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
    /// Not to be delivered before this time (ms since 1970): a retry after a provider's `Retry-After` waits in the
    /// delay queues until then, holding no worker.
    public var notBefore: Int64?

    enum CodingKeys: String, CodingKey {
        case app, job, seq, attempt, after, through, tokens
        case notBefore = "not_before"
    }

    public init(
        app: String?, job: String, seq: Int, attempt: Int, after: String? = nil, through: String? = nil,
        tokens: [String]? = nil, notBefore: Int64? = nil
    ) {
        self.app = app
        self.job = job
        self.seq = seq
        self.attempt = attempt
        self.after = after
        self.through = through
        self.tokens = tokens
        self.notBefore = notBefore
    }

    /// The batch's identity, unique across attempts. A legacy message's app is resolved (`app` set) before its key
    /// is used.
    public var key: BatchKey { BatchKey(app: app ?? "", job: job, seq: seq, attempt: attempt) }
}

extension BatchMessage {
    /// A job's first batches, which travel in the transactional lane (`Job.brokerPriority`): all of a broadcast to a
    /// few thousand devices, and the start of a larger one.
    public static let leadBatches = 4

    /// Whether the batch travels in the bulk lane: a large job's batches past its first few, and their retries.
    public var isBulk: Bool { seq >= Self.leadBatches }
}

/// Identifies one job: ids are scoped by app.
public struct JobKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var app: String
    public var id: String

    public init(app: String, id: String) {
        self.app = app
        self.id = id
    }

    public static func < (lhs: JobKey, rhs: JobKey) -> Bool { (lhs.app, lhs.id) < (rhs.app, rhs.id) }

    public var description: String { "\(app)/\(id)" }
}

/// Identifies one delivery of one batch.
public struct BatchKey: Sendable, Hashable, CustomStringConvertible {
    public var app: String
    public var job: String
    public var seq: Int
    public var attempt: Int

    public init(app: String, job: String, seq: Int, attempt: Int) {
        self.app = app
        self.job = job
        self.seq = seq
        self.attempt = attempt
    }

    /// The batch's job.
    public var jobKey: JobKey { JobKey(app: app, id: job) }

    /// The job id, batch number and attempt (the app goes in its own log field).
    public var description: String { "\(job)#\(seq).\(attempt)" }
}

extension BatchMessage {
    /// The message for `key`.
    public init(_ key: BatchKey, after: String? = nil, through: String? = nil, tokens: [String]? = nil) {
        self.init(
            app: key.app, job: key.job, seq: key.seq, attempt: key.attempt, after: after, through: through,
            tokens: tokens)
    }
}
