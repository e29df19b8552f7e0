import HeraldCore
import Logging
import PostgresNIO

/// What happened to a job's notifications so far.
public struct JobCounters: Sendable, Hashable, Codable {
    public var targeted: Int = 0
    public var sent: Int = 0
    public var pruned: Int = 0
    public var failed: Int = 0
    public var expired: Int = 0
    public var retried: Int = 0

    public init(targeted: Int = 0, sent: Int = 0, pruned: Int = 0, failed: Int = 0, expired: Int = 0, retried: Int = 0)
    {
        self.targeted = targeted
        self.sent = sent
        self.pruned = pruned
        self.failed = failed
        self.expired = expired
        self.retried = retried
    }
}

/// A job row.
public struct JobStatus: Sendable, Hashable {
    /// The job's identity.
    public var key: JobKey { JobKey(app: app, id: id) }
    public var id: String
    public var app: String
    public var state: JobState
    public var targetKind: String
    public var counters: JobCounters
    public var error: String?
}

extension Store {
    /// Claims a job for delivery: creates it as `running`, or, if the app already has a job with this id, says what
    /// state it is in so that a job already finished is not sent again (the job id is the idempotency key within its
    /// app).
    ///
    /// - Returns: nil if the job is now running for the caller; the existing state if it was already final.
    public func startJob(id: String, app: String, targetKind: String) async throws(StoreError) -> JobState? {
        try await run("starting a job") {
            let rows = try await client.query(
                """
                INSERT INTO jobs (id, app_id, state, target_kind, started_at)
                VALUES (\(id), \(app), 'running', \(targetKind), now())
                ON CONFLICT (app_id, id) DO UPDATE SET
                    state = CASE WHEN herald_job_is_final(jobs.state) THEN jobs.state ELSE 'running' END,
                    started_at = coalesce(jobs.started_at, now())
                RETURNING state, (xmax = 0) AS inserted
                """,
                logger: logger
            )
            for try await (state, _) in rows.decode((String, Bool).self) {
                let parsed = JobState(rawValue: state) ?? .running
                return parsed.isFinal ? parsed : nil
            }
            return nil
        }
    }

    /// Marks a job finished with its final state and, for a failed job, the reason.
    public func finishJob(_ job: JobKey, state: JobState, error: String? = nil) async throws(StoreError) {
        try await endJobs(EndJobs(.stop, [EndJobs.Item(key: job, state: state, error: error)]), "finishing a job")
    }

    /// Records a job that was rejected before delivery (unknown app, invalid notification) as failed.
    public func recordRejectedJob(id: String, app: String, reason: String) async throws(StoreError) {
        let job = EndJobs.Item(key: JobKey(app: app, id: id), state: .failed, error: reason, kind: "unknown")
        try await endJobs(EndJobs(.reject, [job]), "recording a rejected job")
    }

    /// The app's job with `id`, if any.
    public func job(app: String, id: String) async throws(StoreError) -> JobStatus? {
        try await run("reading a job") {
            let rows = try await client.query(
                """
                SELECT id, app_id, state, target_kind, targeted, sent, pruned, failed, expired, retried, error
                FROM jobs WHERE app_id = \(app) AND id = \(id)
                """,
                logger: logger
            )
            return try await Self.collectStatuses(rows).first
        }
    }

    /// Every app's job with `id` (for operators who know only the id: `herald jobs show ID`), at most `limit`.
    public func jobs(id: String, limit: Int = 100) async throws(StoreError) -> [JobStatus] {
        try await run("reading jobs by id") {
            let rows = try await client.query(
                """
                SELECT id, app_id, state, target_kind, targeted, sent, pruned, failed, expired, retried, error
                FROM jobs WHERE id = \(id) ORDER BY app_id LIMIT \(limit)
                """,
                logger: logger
            )
            return try await Self.collectStatuses(rows)
        }
    }

    /// The app of the one job with `id`, if exactly one app has a job with that id: how a batch message published
    /// before ids were scoped by app (it names no app) finds its job.
    public func onlyApp(ofJob id: String) async throws(StoreError) -> String? {
        try await run("finding a job's app") {
            let rows = try await client.query(
                "SELECT app_id FROM jobs WHERE id = \(id) LIMIT 2", logger: logger)
            var apps: [String] = []
            for try await app in rows.decode(String.self) { apps.append(app) }
            return apps.count == 1 ? apps[0] : nil
        }
    }

    private static func collectStatuses(_ rows: PostgresRowSequence) async throws -> [JobStatus] {
        var jobs: [JobStatus] = []
        for try await row in rows { jobs.append(try jobStatus(row)) }
        return jobs
    }

    /// A job's status from the first eleven columns of `row`: id, app_id, state, target_kind, targeted, sent,
    /// pruned, failed, expired, retried, error.
    static func jobStatus(_ row: PostgresRow) throws -> JobStatus {
        let cells = row.makeRandomAccess()
        func count(_ index: Int) throws -> Int { Int(try cells[index].decode(Int64.self)) }
        return JobStatus(
            id: try cells[0].decode(String.self),
            app: try cells[1].decode(String.self),
            state: JobState(rawValue: try cells[2].decode(String.self)) ?? .failed,
            targetKind: try cells[3].decode(String.self),
            counters: JobCounters(
                targeted: try count(4), sent: try count(5), pruned: try count(6), failed: try count(7),
                expired: try count(8), retried: try count(9)
            ),
            error: try cells[10].decode(String?.self)
        )
    }
}
