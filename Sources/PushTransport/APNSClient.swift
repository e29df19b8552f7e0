import APNSCore
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// An APNs client: a pool of HTTP/2 connections to one endpoint with one credential.
///
/// Connections open lazily on first use; each request goes to the connection with the fewest outstanding requests
/// and waits there for a stream within the server's SETTINGS_MAX_CONCURRENT_STREAMS. The client holds at most
/// ``APNSClientConfiguration/maximumQueuedRequests`` requests at once; further `send` calls wait for room.
/// APNs' answers, rejections included, are returned as ``APNSOutcome``; only a transport failure throws.
public final class APNSClient: PooledClient {
    typealias Credential = ProviderTokenCache.Token

    private let configuration: APNSClientConfiguration
    let pool: ConnectionPool
    var logger: Logger { pool.logger }
    var metrics: TransportMetrics { pool.metrics }

    /// Creates a client; nothing connects until the first `send`.
    public init(configuration: APNSClientConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.pool = ConnectionPool(
            settings: configuration.connectionSettings, eventLoopGroup: eventLoopGroup,
            metrics: TransportMetrics(provider: .apns), logger: logger)
    }

    /// Sends many notifications with at most `concurrency` in flight and returns each one's result, in order; see
    /// ``PooledClient/sendBatch(count:concurrency:request:onAnswer:)``.
    public func sendAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> APNSRequest?,
        onAnswer: @escaping @Sendable (Int, Result<APNSOutcome, TransportError>) -> Void
    ) async -> [Result<APNSOutcome, TransportError>?] {
        await sendBatch(count: count, concurrency: concurrency, request: request, onAnswer: onAnswer)
    }

    /// Sends one notification and returns APNs' answer.
    ///
    /// The request is sent as given (validate it first). A 403 ExpiredProviderToken refreshes the provider token
    /// once and sends again; a request that provably never reached the server is placed on another connection.
    /// Throws only when no answer could be had: see ``TransportError``.
    public func send(_ request: APNSRequest) async throws(TransportError) -> APNSOutcome {
        let start = NIODeadline.now()
        do {
            let response = try await sendWithRetries(request, after: nil)
            let outcome = APNSOutcome(response)
            metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
            record(outcome)
            logger.trace("APNs request answered", metadata: ["status": "\(outcome.status)"])
            return outcome
        } catch {
            metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
            metrics.record(error)
            logger.debug("APNs request failed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// Sends with the transport's retries: refused streams and requests a closing connection never sent go to
    /// another connection; with token auth, ExpiredProviderToken refreshes the token once and
    /// UnrelatedKeyIdInToken retries once on a new connection.
    ///
    /// - Parameter first: the result of a first try already made (by a batch) with `token`.
    func sendWithRetries(
        _ request: APNSRequest,
        after first: (result: StreamResult, credential: ProviderTokenCache.Token?)?
    ) async throws(TransportError) -> WireResponse {
        let cache = tokenCache
        var token: ProviderTokenCache.Token? = nil
        var pending: StreamResult? = nil
        if let first {
            (pending, token) = first
        } else if let cache {
            token = try providerToken { () throws(ProviderTokenError) in try cache.current() }
        }
        var refreshed = false
        var movedForKey = false
        var retries = TransportRetries()
        while true {
            let result: StreamResult
            if let taken = pending {
                result = taken
                pending = nil
            } else {
                result = await attempt(request, bearerToken: token?.value)
            }
            switch result {
            case .response(let response):
                // Only a 403 may call for another try: read it as APNs' answer then.
                guard response.status == 403 else { return response }
                let reason = APNSOutcome(response).reason
                if reason == .unrelatedKeyIdInToken {
                    // The connection was replaced in `attempt`; retry once on a new one.
                    guard !movedForKey else { return response }
                    movedForKey = true
                    logger.debug("APNs answered UnrelatedKeyIdInToken; retrying on a new connection")
                    continue
                }
                guard let cache, let rejected = token, reason == .expiredProviderToken, !refreshed else {
                    return response
                }
                refreshed = true
                token = try providerToken { () throws(ProviderTokenError) in try cache.refresh(after: rejected) }
                logger.debug("APNs provider token expired; retrying with a refreshed token")
            case .refused(let error):
                try retries.another(after: result)
                logger.debug("APNs request not processed; retrying", metadata: ["error": "\(error)"])
            case .notSent(let error):
                try retries.another(after: result)
                logger.debug("APNs request not sent; moving it to another connection", metadata: ["error": "\(error)"])
            case .failure(let error):
                throw error
            }
        }
    }

    /// Whether a first try's result is final: not a refused stream, a request its connection never sent, or a 403
    /// that a refreshed provider token (ExpiredProviderToken) or a new connection (UnrelatedKeyIdInToken) may cure.
    /// A batch finishes those after its first tries.
    func isFinal(_ result: StreamResult) -> Bool {
        switch result {
        case .response(let response):
            guard response.status == 403 else { return true }
            let reason = APNSOutcome(response).reason
            return reason != .expiredProviderToken && reason != .unrelatedKeyIdInToken
        case .failure: return true
        case .notSent, .refused: return false
        }
    }

    /// The provider token cache with token authentication; nil with a certificate.
    var tokenCache: ProviderTokenCache? {
        switch configuration.authentication {
        case .token(let cache): cache
        case .certificate: nil
        }
    }

    func providerToken(
        _ body: () throws(ProviderTokenError) -> ProviderTokenCache.Token
    ) throws(TransportError) -> ProviderTokenCache.Token {
        do {
            return try body()
        } catch {
            throw TransportError(.providerToken, "could not sign a provider token", underlying: error)
        }
    }

    /// One try: room in the client, a connection, a stream, an answer.
    private func attempt(_ request: APNSRequest, bearerToken: String?) async -> StreamResult {
        let (result, lease) = await pool.attempt(.apns(request), bearerToken: bearerToken)
        if let lease { finish(lease, with: result) }
        return result
    }

    /// What one try teaches about its connection, then its room passes on. Called once per lease, on any thread.
    func finish(_ lease: ConnectionPool.Lease, with result: StreamResult) {
        var replacing: TransportError? = nil
        if case .response(let response) = result, response.status == 403,
            APNSOutcome(response).reason == .unrelatedKeyIdInToken
        {
            // APNs binds a connection to the key of its first push: this key needs a connection of its own.
            replacing = TransportError(.protocolError, "APNs answered UnrelatedKeyIdInToken")
        }
        pool.finish(lease, with: result, replacing: replacing)
    }

    func credential() async throws(TransportError) -> ProviderTokenCache.Token? {
        guard let cache = tokenCache else { return nil }
        return try providerToken { () throws(ProviderTokenError) in try cache.current() }
    }

    static func bearer(of credential: ProviderTokenCache.Token) -> String { credential.value }

    func wire(_ request: APNSRequest) -> WireRequest { .apns(request) }

    static func request(of wire: WireRequest) -> APNSRequest {
        guard case .apns(let request) = wire else {
            preconditionFailure("an APNs client sent another provider's request")
        }
        return request
    }

    static func answer(_ response: WireResponse) -> APNSOutcome { APNSOutcome(response) }

    func record(_ result: Result<WireResponse, TransportError>) {
        switch result {
        case .success(let response): record(APNSOutcome(response))
        case .failure(let error): metrics.record(error)
        }
    }

    /// Counts an answer by its status and documented reason.
    private func record(_ outcome: APNSOutcome) {
        metrics.record(status: outcome.status, reason: outcome.reason.map { $0.isKnown ? $0.rawValue : "other" })
    }

    /// Fails requests still waiting for room or for a stream with ``TransportError/Code/shutDown``, lets
    /// in-flight requests finish (within their timeout), then closes every connection with GOAWAY.
    public func shutdown() async {
        await pool.shutdown()
        logger.debug("APNs client shut down")
    }
}

extension APNSOutcome {
    /// APNs' answer read from what the server sent.
    init(_ response: WireResponse) {
        self.init(
            status: response.status, apnsID: response.apnsID, apnsUniqueID: response.apnsUniqueID, body: response.body)
    }
}
