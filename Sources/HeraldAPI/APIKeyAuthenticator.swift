import HeraldStore
import Hummingbird

/// Checks `Authorization: Bearer <key>` against the stored key hashes and records the key's app in the context.
/// A missing or unknown key is a 401; whether the app matches the route is each route's check (403).
struct APIKeyAuthenticator: RouterMiddleware {
    typealias Context = APIRequestContext
    let store: Store

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("missing API key: send Authorization: Bearer <key>")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.unauthorized("the Authorization header must be Bearer <key>")
        }
        let key = parts[1].trimmingSpaces()
        guard !key.isEmpty, key.utf8.count <= 256,
            let app = try await store.app(forAPIKeyHash: APIKey.hash(String(key)))
        else {
            throw APIError.unauthorized("invalid API key")
        }
        var context = context
        context.authenticatedApp = app
        context.logger[metadataKey: "app"] = "\(app)"
        return try await next(request, context)
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var view = self
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return view
    }
}
