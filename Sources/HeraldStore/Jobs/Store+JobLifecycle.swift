import HeraldCore
import Logging
import PostgresNIO

/// What the planner should do with a job message.
public enum JobRegistration: Sendable, Hashable {
    /// Plan it, starting after `cursor` (nil: from the start) with batch number `nextSeq`; `planned` means every
    /// batch already exists.
    case plan(cursor: String?, nextSeq: Int, planned: Bool)
    /// Held until its `send_at`.
    case scheduled
    /// Already final (done, failed, cancelled): acknowledge without sending — the id is the idempotency key within
    /// its app.
    case duplicate(JobState)
}

extension Store {
    /// Records a job message and decides its fate: new jobs start running (or wait as scheduled); a known job that
    /// is queued, due or running resumes where planning stopped; a final one is a duplicate. A job a group of small
    /// jobs is delivering is decided once that group has written it. Only the holder of the job's planning claim
    /// (`PlanningClaims`) may act on `.plan`.
    public func register(
        _ job: PreparedJob,
        spec: String,
        publishedAt: Int64?
    ) async throws(StoreError) -> JobRegistration {
        let sendAt = job.sendAt.map { Double($0) / 1000 }
        let published = publishedAt.map { Double($0) / 1000 }
        return try await run("registering a job") {
            let rows = try await client.query(
                """
                INSERT INTO jobs (id, app_id, state, target_kind, spec, send_at, published_at, throttle_per_second, started_at)
                SELECT \(job.id), \(job.app),
                       CASE WHEN to_timestamp(\(sendAt)) > now() THEN 'scheduled' ELSE 'running' END,
                       \(job.audience.kind), \(spec)::jsonb, to_timestamp(\(sendAt)),
                       coalesce(to_timestamp(\(published)), now()), \(job.throttlePerSecond),
                       CASE WHEN to_timestamp(\(sendAt)) > now() THEN NULL ELSE now() END
                -- waits while a group of small jobs holds the id (claimSmallJobs), then sees its row
                FROM (SELECT pg_advisory_xact_lock(
                          herald_job_lock_key(\(Self.smallJobLockSpace), \(job.app), \(job.id)))) AS claim
                ON CONFLICT (app_id, id) DO UPDATE SET
                    state = CASE
                        WHEN jobs.state = 'queued' THEN 'running'
                        WHEN jobs.state = 'scheduled' AND coalesce(jobs.send_at <= now(), true) THEN 'running'
                        ELSE jobs.state END,
                    started_at = coalesce(jobs.started_at, now())
                RETURNING state, plan_cursor, planned, batches
                """,
                logger: logger
            )
            for try await (state, cursor, planned, batches) in rows.decode((String, String?, Bool, Int).self) {
                switch JobState(rawValue: state) ?? .failed {
                case .scheduled: return .scheduled
                case .running, .queued: return .plan(cursor: cursor, nextSeq: batches, planned: planned)
                case let final: return .duplicate(final)
                }
            }
            return .duplicate(.failed)
        }
    }

    /// Takes up to `limit` scheduled jobs that are due, locked so that concurrent schedulers never take the same one,
    /// hands their specs to `release` (which publishes them), and marks them queued when `release` succeeds.
    ///
    /// - Returns: how many jobs were released.
    public func releaseDueJobs(
        limit: Int,
        _ release: @escaping @Sendable ([(job: JobKey, spec: String)]) async throws -> Void
    ) async throws(StoreError) -> Int {
        try await releaseJobs(
            "releasing due jobs",
            taking: Self.dueJobsQuery(limit: limit),
            then: { due in
                """
                UPDATE jobs j SET state = 'queued', awaiting_publish = false
                FROM unnest(\(due.map(\.app))::text[], \(due.map(\.id))::text[]) AS d(app_id, id)
                WHERE j.app_id = d.app_id AND j.id = d.id AND j.state = 'scheduled'
                """
            },
            release)
    }

    /// Publishes the queued jobs the API recorded but did not see confirmed (an API that died between its insert
    /// and its publish, schemas/028) once they are older than `grace`, oldest first, as `releaseDueJobs` does, and
    /// records them as published. Returns how many it published.
    public func releaseUnpublishedJobs(
        olderThan grace: Duration, limit: Int,
        _ release: @escaping @Sendable ([(job: JobKey, spec: String)]) async throws -> Void
    ) async throws(StoreError) -> Int {
        let seconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        return try await releaseJobs(
            "publishing jobs the API did not",
            taking: """
                SELECT app_id, id, spec::text FROM jobs
                WHERE awaiting_publish AND state = 'queued' AND created_at < now() - make_interval(secs => \(seconds))
                ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                """,
            then: { due in
                """
                UPDATE jobs j SET awaiting_publish = false
                FROM unnest(\(due.map(\.app))::text[], \(due.map(\.id))::text[]) AS d(app_id, id)
                WHERE j.app_id = d.app_id AND j.id = d.id
                """
            },
            release)
    }

    /// Takes `job` if it is still queued and awaiting its publish `grace` after its insert (the API that recorded it
    /// died before publishing): hands its spec to `release` (which publishes it) and records it as published, in one
    /// transaction that holds the row, so that concurrent takers and the workers' sweeper publish it once. Returns
    /// whether it took the job.
    public func releaseUnpublishedJob(
        _ job: JobKey, olderThan grace: Duration,
        _ release: @escaping @Sendable ([(job: JobKey, spec: String)]) async throws -> Void
    ) async throws(StoreError) -> Bool {
        let seconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        let taken = try await releaseJobs(
            "publishing a job its API did not",
            taking: """
                SELECT app_id, id, spec::text FROM jobs
                WHERE app_id = \(job.app) AND id = \(job.id) AND awaiting_publish AND state = 'queued'
                  AND created_at < now() - make_interval(secs => \(seconds))
                FOR UPDATE SKIP LOCKED
                """,
            then: { due in
                """
                UPDATE jobs j SET awaiting_publish = false
                FROM unnest(\(due.map(\.app))::text[], \(due.map(\.id))::text[]) AS d(app_id, id)
                WHERE j.app_id = d.app_id AND j.id = d.id
                """
            },
            release)
        return taken > 0
    }

    /// The scheduled jobs that are due, earliest first: polled by the scheduler, read through `jobs_due`.
    package static func dueJobsQuery(limit: Int) -> PostgresQuery {
        """
        SELECT app_id, id, spec::text FROM jobs WHERE state = 'scheduled' AND send_at <= now()
        ORDER BY send_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
        """
    }

    /// In one transaction: takes the jobs `taking` selects (app, id and spec, locked), hands their specs to
    /// `release` (which publishes them), then runs `then` for them. Returns how many were released.
    ///
    /// `settings` are planner settings for the transaction (`set_config(name, value, true)`), set before `taking`.
    func releaseJobs(
        _ what: String,
        taking: PostgresQuery,
        settings: [(String, String)] = [],
        then: @escaping @Sendable ([JobKey]) -> PostgresQuery,
        _ release: @escaping @Sendable ([(job: JobKey, spec: String)]) async throws -> Void
    ) async throws(StoreError) -> Int {
        try await run(what) {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.setForTransaction(settings, logger: logger)
                let rows = try await connection.query(taking, logger: logger)
                var due: [(job: JobKey, spec: String)] = []
                for try await (app, id, spec) in rows.decode((String, String, String).self) {
                    due.append((JobKey(app: app, id: id), spec))
                }
                guard !due.isEmpty else { return 0 }
                try await release(due)
                try await connection.query(then(due.map(\.job)), logger: logger)
                return due.count
            }
        }
    }

    /// Cancels a job that is queued, scheduled or running: nothing more of it is sent. Returns the state it had, or
    /// nil if there is no such job or it was already final.
    public func cancelJob(_ job: JobKey) async throws(StoreError) -> JobState? {
        let ended = try await endJobs(
            EndJobs(.stop, [EndJobs.Item(key: job, state: .cancelled, error: "cancelled")]), "cancelling a job")
        return ended.first?.before
    }

    /// Stops a job because APNs rejected it as a whole. Returns true only for the one caller that made the change,
    /// so that the job is parked once however many workers saw the rejection.
    public func failJob(_ job: JobKey, reason: String) async throws(StoreError) -> Bool {
        let ended = try await endJobs(
            EndJobs(.stop, [EndJobs.Item(key: job, state: .failed, error: reason)]), "failing a job")
        return !ended.isEmpty
    }

    /// Deletes finished jobs (with their batches and badge records) older than the idempotency retention window, in
    /// chunks (`deleteAllExpired`, which the workers' retention runs).
    @discardableResult
    public func purgeFinishedJobs(olderThanSeconds seconds: Int) async throws(StoreError) -> Int {
        try await deleteAllExpired(.jobs, olderThan: .seconds(seconds))
    }
}
