import HeraldStore
import Hummingbird
import Logging

/// The request context of the API: Hummingbird's core storage plus the API key the caller presented.
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `APIKeyAuthenticator` once the bearer key is checked.
    public var authenticatedKey: AuthenticatedKey?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.authenticatedKey = nil
    }

    /// The app the caller's key belongs to.
    public var authenticatedApp: String? { authenticatedKey?.app }

    /// The caller's key, if it belongs to `app` and may act within `scope`; otherwise the 401 or 403 to answer.
    func require(_ scope: APIScope, app: String) throws(APIError) -> AuthenticatedKey {
        let key = try require(scope)
        guard key.app == app else { throw APIError.forbidden() }
        return key
    }

    /// The caller's key, if it may act within `scope` (for routes of the key's own app).
    func require(_ scope: APIScope) throws(APIError) -> AuthenticatedKey {
        guard let key = authenticatedKey else { throw APIError.unauthorized("missing API key") }
        guard key.allows(scope) else { throw APIError.missingScope(scope, has: key.scopes) }
        return key
    }
}
