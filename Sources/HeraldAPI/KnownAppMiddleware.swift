import HeraldCore
import Hummingbird

/// Refuses a route under `/v1/apps/{app}/…` whose app the API's apps file (`herald api --apps-file`) does not list:
/// 404 `unknown_app`, so that a misspelt app id is seen when the device is registered or the job sent, not later as
/// a parked message. An API started without an apps file takes every app id.
///
/// The answer does not suggest a listed id: a key of one app is not told the ids of the others.
struct KnownAppMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let ids: Set<String>

    init(apps: AppsFile) { ids = Set(apps.apps.map(\.id)) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let app = context.parameters.get("app"), !ids.contains(app) {
            throw APIError(.notFound, code: "unknown_app", "app \(app) is not in the API's apps file")
        }
        return try await next(request, context)
    }
}
