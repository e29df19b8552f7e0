import HeraldStore
import Hummingbird

/// `GET /v1/jobs/{id}` (state and counters) and `DELETE /v1/jobs/{id}` (cancel). The job's app must be the key's.
struct JobRoutes: Sendable {
    let api: API

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get("jobs/{id}", use: show)
        group.delete("jobs/{id}", use: cancel)
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

    /// The job, if it exists and belongs to the caller's app.
    func ownedJob(_ context: APIRequestContext) async throws -> JobStatus {
        let id = try context.parameters.decoded("id")
        guard let job = try await api.store.job(id: id) else { throw APIError.notFound("no such job") }
        try context.requireApp(job.app)
        return job
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        try JSONResponse.make(JobView(try await ownedJob(context)))
    }

    @Sendable func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        let job = try await ownedJob(context)
        guard let previous = try await api.store.cancelJob(id: job.id) else {
            let now = try await api.store.job(id: job.id)?.state ?? job.state
            throw APIError(.conflict, code: "job_finished", "the job is already \(now.rawValue)")
        }
        var view = JobView(job)
        view.state = JobState.cancelled.rawValue
        view.previousState = previous.rawValue
        return try JSONResponse.make(view)
    }
}
