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
        try await releaseJobs(
            "resuming paused planning",
            taking: """
                SELECT j.app_id, j.id, j.spec::text FROM jobs j
                WHERE j.plan_resume_below IS NOT NULL AND j.state = 'running'
                  AND (SELECT count(*) FROM (
                           SELECT 1 FROM batches b
                           WHERE b.app_id = j.app_id AND b.job_id = j.id AND b.state = 'pending'
                           LIMIT j.plan_resume_below) AS pending) < j.plan_resume_below
                LIMIT \(limit) FOR UPDATE OF j SKIP LOCKED
                """,
            then: { due in
                """
                UPDATE jobs j SET plan_resume_below = NULL
                FROM unnest(\(due.map(\.app))::text[], \(due.map(\.id))::text[]) AS d(app_id, id)
                WHERE j.app_id = d.app_id AND j.id = d.id
                """
            },
            release)
    }
}
