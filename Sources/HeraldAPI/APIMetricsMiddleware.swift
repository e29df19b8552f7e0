import Hummingbird
import Metrics

/// Counts requests and times them by route pattern, method and status: bounded labels (the route as registered,
/// never the app, token or job id in it).
struct APIMetricsMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        var status = 500
        defer {
            let route = context.endpointPath ?? "NotFound"
            let dimensions = [("route", route), ("method", request.method.rawValue), ("status", String(status))]
            Counter(label: "herald_api_requests_total", dimensions: dimensions).increment()
            Timer(
                label: "herald_api_request_duration_seconds", dimensions: [("route", route)],
                preferredDisplayUnit: .seconds
            )
            .recordInterval(since: start)
        }
        do {
            let response = try await next(request, context)
            status = response.status.code
            return response
        } catch let error as any HTTPResponseError {
            status = error.status.code
            throw error
        }
    }
}

extension Timer {
    fileprivate func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let (seconds, attoseconds) = elapsed.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
