import Logging
import NIOCore

/// An FCM HTTP v1 client: a pool of HTTP/2 connections to FCM's endpoint, at most 100 streams each, on the same
/// libnghttp2 stack as APNs' client; every request is one `messages:send` with a bearer access token.
///
/// FCM's answers, errors included, are returned as ``WireResponse`` (status, `Retry-After`, the error JSON) for the
/// caller to read with FCMCore; only a transport failure throws. A 401 that is not THIRD_PARTY_AUTH_ERROR (the
/// access token expired or was revoked) refreshes the token once and sends again; a request that provably never
/// reached the server goes to another connection. Nothing else is retried here: FCM has no idempotency key, so the
/// caller decides what to send again and when (after `Retry-After`).
public final class FCMClient: PooledClient {
    typealias Credential = String

    private let configuration: FCMClientConfiguration
    private let tokens: any FCMAccessTokens
    private let path: String
    let pool: ConnectionPool
    var logger: Logger { pool.logger }
    var metrics: TransportMetrics { pool.metrics }

    /// Creates a client; nothing connects until the first send.
    public init(
        configuration: FCMClientConfiguration, tokens: any FCMAccessTokens, eventLoopGroup: any EventLoopGroup,
        logger: Logger
    ) {
        self.configuration = configuration
        self.tokens = tokens
        self.path = configuration.sendPath
        self.pool = ConnectionPool(
            settings: configuration.connectionSettings, eventLoopGroup: eventLoopGroup,
            metrics: TransportMetrics(provider: .fcm), logger: logger)
    }

    /// The project this client sends for.
    public var projectID: String { configuration.projectID }

    /// Sends one `messages:send` body (`{"message": …}`) and returns FCM's answer.
    public func send(_ body: [UInt8]) async throws(TransportError) -> WireResponse {
        let start = NIODeadline.now()
        let result: Result<WireResponse, TransportError>
        do {
            result = .success(try await sendWithRetries(body, after: nil))
        } catch {
            result = .failure(error)
        }
        metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        record(result)
        return try result.get()
    }

    /// Sends many bodies with at most `concurrency` in flight and returns each one's result, in order; see
    /// ``PooledClient/sendBatch(count:concurrency:request:onAnswer:)``.
    public func sendAll(
        count: Int,
        concurrency: Int,
        body: @escaping @Sendable (Int) -> [UInt8]?,
        onAnswer: @escaping @Sendable (Int, Result<WireResponse, TransportError>) -> Void
    ) async -> [Result<WireResponse, TransportError>?] {
        await sendBatch(count: count, concurrency: concurrency, request: body, onAnswer: onAnswer)
    }

    func sendWithRetries(
        _ body: [UInt8], after first: (result: StreamResult, credential: String?)?
    ) async throws(TransportError) -> WireResponse {
        var token: String? = nil
        var pending: StreamResult? = nil
        if let first {
            (pending, token) = first
        }
        if token == nil { token = try await credential() }
        var refreshed = false
        var retries = TransportRetries()
        while true {
            let result: StreamResult
            if let taken = pending {
                result = taken
                pending = nil
            } else {
                let (answer, lease) = await pool.attempt(wire(body), bearerToken: token)
                if let lease { finish(lease, with: answer) }
                result = answer
            }
            switch result {
            case .response(let response):
                guard Self.needsNewToken(response), !refreshed, let rejected = token else { return response }
                refreshed = true
                tokens.rejected(rejected)
                token = try await credential()
                logger.debug("FCM access token rejected; retrying with a new one")
            case .refused, .notSent, .failure:
                try retries.another(after: result)
            }
        }
    }

    /// A 401 that a new access token may cure: UNAUTHENTICATED, not THIRD_PARTY_AUTH_ERROR (the project's APNs or
    /// web push credentials, which no token of ours changes).
    static func needsNewToken(_ response: WireResponse) -> Bool {
        guard response.status == 401 else { return false }
        return !response.body.contains(subsequence: thirdPartyAuthError)
    }

    private static let thirdPartyAuthError = Array("THIRD_PARTY_AUTH_ERROR".utf8)

    func isFinal(_ result: StreamResult) -> Bool {
        switch result {
        case .response(let response): !Self.needsNewToken(response)
        case .failure: true
        case .notSent, .refused: false
        }
    }

    static func answer(_ response: WireResponse) -> WireResponse { response }

    func finish(_ lease: ConnectionPool.Lease, with result: StreamResult) {
        pool.finish(lease, with: result)
    }

    func credential() async throws(TransportError) -> String? {
        do {
            return try await tokens.currentToken()
        } catch {
            throw TransportError(.providerToken, "could not get an FCM access token", underlying: error)
        }
    }

    static func bearer(of credential: String) -> String { credential }

    /// Every body goes to the client's one path.
    func wire(_ body: [UInt8]) -> WireRequest { .fcm(FCMWireRequest(path: path, body: body)) }

    static func request(of wire: WireRequest) -> [UInt8] {
        guard case .fcm(let request) = wire else {
            preconditionFailure("an FCM client sent another provider's request")
        }
        return request.body
    }

    func record(_ result: Result<WireResponse, TransportError>) {
        switch result {
        case .success(let response): metrics.record(status: response.status, reason: nil)
        case .failure(let error): metrics.record(error)
        }
    }

    /// Fails requests still waiting, lets in-flight ones finish, then closes every connection with GOAWAY.
    public func shutdown() async {
        await pool.shutdown()
        logger.debug("FCM client shut down")
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes.
    fileprivate func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }
}
