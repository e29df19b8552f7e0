import PostgresNIO

/// How far a job has come, for `herald jobs show` and `herald jobs watch`: its status, whether its planning is
/// finished (before that `targeted` still grows as the planner pages through the audience), and how long it has run.
public struct JobProgress: Sendable, Hashable {
    /// State, counters and error.
    public var status: JobStatus
    /// Whether every device of the job has been targeted: `counters.targeted` is then the job's whole size.
    public var planned: Bool
    /// Seconds since the job started (by the database's clock); nil before it starts.
    public var secondsRunning: Double?

    public init(status: JobStatus, planned: Bool, secondsRunning: Double?) {
        self.status = status
        self.planned = planned
        self.secondsRunning = secondsRunning
    }

    /// Notifications settled for good: sent, pruned, failed or expired (retries still pending are not).
    public var settled: Int {
        let c = status.counters
        return c.sent + c.pruned + c.failed + c.expired
    }

    /// Settled as a share of the devices targeted so far, 0 to 100; nil while nothing is targeted. While planning
    /// goes on it is the share of what is planned so far.
    public var percent: Double? {
        let targeted = status.counters.targeted
        if status.state == .done, targeted == 0 { return 100 }
        guard targeted > 0 else { return nil }
        return min(100, Double(settled) * 100 / Double(targeted))
    }
}

extension Store {
    /// The progress of the job `id` of `app`, or nil if there is none.
    public func jobProgress(app: String, id: String) async throws(StoreError) -> JobProgress? {
        try await run("reading a job's progress") {
            let rows = try await client.query(
                """
                SELECT id, app_id, state, target_kind, targeted, sent, pruned, failed, expired, retried, error,
                    planned, extract(epoch FROM coalesce(finished_at, now()) - started_at)::float8
                FROM jobs WHERE app_id = \(app) AND id = \(id)
                """,
                logger: logger
            )
            for try await row in rows {
                let cells = row.makeRandomAccess()
                return JobProgress(
                    status: try Self.jobStatus(row), planned: try cells[11].decode(Bool.self),
                    secondsRunning: try cells[12].decode(Double?.self))
            }
            return nil
        }
    }
}
