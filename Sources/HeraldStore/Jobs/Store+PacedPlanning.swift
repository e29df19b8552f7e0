import HeraldCore
import PostgresNIO

/// Paced planning (schemas/017): a planner that has published one window of a job's batches pauses the job, and
/// the scheduler resumes it once fewer than a window of its batches are pending, so that a job never has more than
/// about two windows of batches waiting in the queue.
extension Store {
    /// Pauses a running job's planning until fewer than `resumeBelow` of its batches are pending. Returns false,
    /// pausing nothing, if the job no longer runs.
    public func pausePlanning(job: JobKey, resumeBelow: Int) async throws(StoreError) -> Bool {
        try await run("pausing planning") {
            let rows = try await client.query(
                """
                UPDATE jobs SET plan_resume_below = \(max(resumeBelow, 1))
                WHERE app_id = \(job.app) AND id = \(job.id) AND state = 'running' RETURNING 1
                """,
                logger: logger
            )
            for try await _ in rows { return true }
            return false
        }
    }

    /// Takes up to `limit` running jobs whose planning is paused and has fewer pending batches than its threshold,
    /// locked so that concurrent schedulers never take the same one, hands their specs to `release` (which
    /// publishes them), and clears their pause when `release` succeeds.
    ///
    /// - Returns: how many jobs were resumed.
    public func resumePausedPlanning(
        limit: Int,
        _ release: @escaping @Sendable ([(job: JobKey, spec: String)]) async throws -> Void
    ) async throws(StoreError) -> Int {
        let poll = Self.pausedPlanningPoll(limit: limit)
        return try await releaseJobs(
            "resuming paused planning",
            taking: poll.query,
            settings: poll.settings,
            then: { due in
                """
                UPDATE jobs j SET plan_resume_below = NULL
                FROM unnest(\(due.map(\.app))::text[], \(due.map(\.id))::text[]) AS d(app_id, id)
                WHERE j.app_id = d.app_id AND j.id = d.id
                """
            },
            release)
    }

    /// The jobs whose paused planning may resume. The scheduler runs it every `planningResumeInterval` (200 ms)
    /// while a worker runs, so it must read only the few paused jobs, through `jobs_planning_paused`, however many
    /// jobs the table holds and whatever its statistics say: with the statistics of an empty table or of a column
    /// that was all NULL, PostgreSQL takes `plan_resume_below IS NOT NULL` for most rows and scans the whole table
    /// (9 ms each time with 100,000 jobs, 5 % of a core). Its settings keep it on the index: no sequential scan in
    /// its transaction, so that the partial index of paused jobs (and the pending batches' index) is read whatever
    /// the statistics say.
    package static func pausedPlanningPoll(limit: Int) -> (query: PostgresQuery, settings: [(String, String)]) {
        let query: PostgresQuery = """
            SELECT j.app_id, j.id, j.spec::text FROM jobs j
            WHERE j.plan_resume_below IS NOT NULL AND j.state = 'running'
              AND (SELECT count(*) FROM (
                       SELECT 1 FROM batches b
                       WHERE b.app_id = j.app_id AND b.job_id = j.id AND b.state = 'pending'
                       LIMIT j.plan_resume_below) AS pending) < j.plan_resume_below
            LIMIT \(limit) FOR UPDATE OF j SKIP LOCKED
            """
        return (query, [("enable_seqscan", "off")])
    }
}
