import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v1/jobs/{id}` (state and counters), `DELETE /v1/jobs/{id}` (cancel) and
/// `POST /v1/apps/{app}/jobs/{id}/restore` (put back the devices the job pruned). Job ids are scoped by app: `id`
/// names a job of the API key's app, and another app's job with the same id is not visible (404, as for an unknown
/// id: the answer does not tell whether another app uses an id).
struct JobRoutes: Sendable {
    let api: API

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get("jobs/{id}", use: show)
        group.delete("jobs/{id}", use: cancel)
        group.post("apps/{app}/jobs/{id}/restore", use: restore)
    }

    struct JobView: Encodable {
        var id: String
        var app: String
        var state: String
        var targetKind: String
        var counters: JobCounters
        var error: String?
        var previousState: String?

        enum CodingKeys: String, CodingKey {
            case id, app, state, counters, error
            case targetKind = "target_kind"
            case previousState = "previous_state"
        }

        init(_ status: JobStatus) {
            id = status.id
            app = status.app
            state = status.state.rawValue
            targetKind = status.targetKind
            counters = status.counters
            error = status.error
        }
    }

    /// The caller's app's job with the id in the path, if the caller's key may act within `scope`.
    func ownedJob(_ context: APIRequestContext, scope: APIScope) async throws -> JobStatus {
        let app = try context.require(scope).app
        let id = try context.parameters.decoded("id")
        do {
            try JobLimits.checkKey(app: app, id: id)
        } catch {
            throw APIError.badRequest("invalid_job", "\(error.message)")
        }
        guard let job = try await api.store.job(app: app, id: id) else { throw APIError.notFound("no such job") }
        return job
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        try JSONResponse.make(JobView(try await ownedJob(context, scope: .read)))
    }

    @Sendable func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        let job = try await ownedJob(context, scope: .send)
        guard let previous = try await api.store.cancelJob(job.key) else {
            let now = try await api.store.job(app: job.app, id: job.id)?.state ?? job.state
            throw APIError(.conflict, code: "job_finished", "the job is already \(now.rawValue)")
        }
        var view = JobView(job)
        view.state = JobState.cancelled.rawValue
        view.previousState = previous.rawValue
        return try JSONResponse.make(view)
    }

    /// Restores the devices the job pruned, from its dead-token records; tokens registered again since are skipped.
    @Sendable func restore(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let id = try context.parameters.decoded("id")
        do {
            try JobLimits.checkKey(app: app, id: id)
        } catch {
            throw APIError.badRequest("invalid_job", "\(error)")
        }
        _ = try context.require(.admin, app: app)
        guard let job = try await api.store.job(app: app, id: id) else { throw APIError.notFound("no such job") }
        // A running job may prune again after the restore: restore once it has stopped (finished, failed by the
        // prune breaker, or cancelled).
        guard job.state.isFinal else {
            throw APIError(
                .conflict, code: "job_running",
                "job \(id) is \(job.state.rawValue); restore its devices once it has finished or been cancelled")
        }
        return try JSONResponse.make(try await api.store.restorePrunedDevices(job.key))
    }
}
