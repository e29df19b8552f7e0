import Foundation
import HeraldStore
import Hummingbird
import NIOCore

/// An API error, answered as `{"error": {"code": …, "message": …}}` with its status. The message is safe to show
/// and to log: it names the rule that was broken, never a device token, an API key or a payload.
public struct APIError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// A stable, machine-readable code such as `invalid_token` or `body_too_large`.
    public var code: String
    public var message: String
    /// Whole seconds after which the request may succeed (`Retry-After`), for a 429.
    public var retryAfter: Int?
    /// The methods the path serves (`Allow`), for a 405.
    public var allow: [String]?

    public init(
        _ status: HTTPResponse.Status, code: String, _ message: String, retryAfter: Int? = nil, allow: [String]? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.allow = allow
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    private struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(Body(error: .init(code: code, message: message)))) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="herald""# }
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow.joined(separator: ", ") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, code: "unauthorized", message) }
    static func forbidden() -> APIError {
        APIError(.forbidden, code: "forbidden", "the API key does not belong to this app")
    }
    static func missingScope(_ scope: APIScope, has scopes: Set<APIScope>) -> APIError {
        let held = scopes.sorted().map(\.rawValue).joined(separator: ", ")
        return APIError(
            .forbidden, code: "scope_missing",
            "this route needs an API key with the \(scope.rawValue) scope; this key has \(held) "
                + "(herald keys create --app APP --scope \(scope.rawValue))")
    }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, code: "not_found", message) }
    static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code: code, message) }
    static func unprocessable(_ code: String, _ message: String) -> APIError {
        APIError(.unprocessableContent, code: code, message)
    }
}

/// Turns every error into the JSON error shape: API errors as they are, Hummingbird's (404 for an unknown route, 405
/// with `Allow` for a known path asked with a method it does not serve, 413 for a body over the limit) by their
/// status, a database that cannot be used as a 503 with `Retry-After`, anything else as a 500 whose details go only
/// to the log.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    /// The routes' methods by path, for 405 answers.
    let allowed: AllowedMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as StoreError where error.isUnavailable {
            context.logger.warning("database unavailable", metadata: ["error": "\(error)"])
            throw APIError.databaseUnavailable
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge
        } catch let error as any HTTPResponseError {
            switch error.status {
            case .notFound:
                let methods = allowed.methods(for: request.uri.path)
                guard methods.isEmpty else {
                    throw APIError(
                        .methodNotAllowed, code: "method_not_allowed",
                        "\(request.method.rawValue.prefix(20)) is not allowed here; this path allows "
                            + methods.joined(separator: ", "),
                        allow: methods)
                }
                throw APIError.notFound("no such route")
            case .methodNotAllowed: throw APIError(.methodNotAllowed, code: "method_not_allowed", "method not allowed")
            case .contentTooLarge: throw APIError.tooLarge
            default:
                throw APIError(error.status, code: "http_\(error.status.code)", error.status.reasonPhrase)
            }
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            throw APIError(.internalServerError, code: "internal", "internal error")
        }
    }
}

extension APIError {
    /// The database is down, lost or refusing connections: try again later.
    static let databaseUnavailable = APIError(
        .serviceUnavailable, code: "database_unavailable", "the database is unavailable; retry later", retryAfter: 5)
    static let tooLarge = APIError(.contentTooLarge, code: "body_too_large", "the request body is over the size limit")
}
