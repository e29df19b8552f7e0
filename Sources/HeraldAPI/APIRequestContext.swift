import Hummingbird
import Logging

/// The request context of the API: Hummingbird's core storage plus the app the caller's API key belongs to.
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `APIKeyAuthenticator` once the bearer key is checked.
    public var authenticatedApp: String?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.authenticatedApp = nil
    }

    /// The authenticated app, if it is `app`; otherwise the 401 or 403 to answer.
    func requireApp(_ app: String) throws(APIError) {
        guard let authenticatedApp else { throw APIError.unauthorized("missing API key") }
        guard authenticatedApp == app else { throw APIError.forbidden() }
    }
}
