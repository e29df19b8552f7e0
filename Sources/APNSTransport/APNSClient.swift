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
public final class APNSClient: Sendable {
    typealias Pool = PoolStateMachine<APNSConnection>

    private let configuration: APNSClientConfiguration
    private let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let metrics: APNSTransportMetrics
    private let sslContext: Result<NIOSSLContext, APNSTransportError>
    private let pool: Mutex<Pool>
    private let ids = Atomic<Int>(0)

    /// How many times one request is sent when the server provably did not process the earlier tries (refused
    /// stream, above a GOAWAY's last stream id).
    static let maximumAttempts = 3
    /// How many times one request moves to another connection without having been sent (its connection went away
    /// while it waited for a stream): safe, but bounded so that a server that keeps going away cannot loop us.
    static let maximumRequeues = 10

    /// Creates a client; nothing connects until the first `send`.
    public init(configuration: APNSClientConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.metrics = APNSTransportMetrics()
        self.sslContext = Self.makeSSLContext(configuration)
        self.pool = Mutex(Pool(connections: configuration.connections, limit: configuration.maximumQueuedRequests))
    }

    /// TLS 1.2 or later, ALPN `h2`, full certificate verification against the system roots plus the configured CAs.
    private static func makeSSLContext(
        _ configuration: APNSClientConfiguration
    ) -> Result<NIOSSLContext, APNSTransportError> {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .default
        if case .certificate(let chain, let privateKey) = configuration.authentication {
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(privateKey)
        }
        do {
            for pem in configuration.additionalTrustRootsPEM {
                let certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
                guard !certificates.isEmpty else {
                    return .failure(APNSTransportError(.tlsFailed, "an additional trust root holds no certificate"))
                }
                tls.additionalTrustRoots.append(.certificates(certificates))
            }
            return .success(try NIOSSLContext(configuration: tls))
        } catch {
            return .failure(APNSTransportError(.tlsFailed, "invalid TLS configuration", underlying: error))
        }
    }

    /// Sends one notification and returns APNs' answer.
    ///
    /// The request is sent as given (validate it first). A 403 ExpiredProviderToken refreshes the provider token
    /// once and sends again; a request that provably never reached the server is placed on another connection.
    /// Throws only when no answer could be had: see ``APNSTransportError``.
    public func send(_ request: APNSRequest) async throws(APNSTransportError) -> APNSOutcome {
        let start = NIODeadline.now()
        do {
            let outcome = try await sendWithRetries(request)
            metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
            metrics.record(outcome)
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
        after first: (result: APNSStreamResult, token: ProviderTokenCache.Token?)? = nil
    ) async throws(APNSTransportError) -> APNSOutcome {
        let cache = tokenCache
        var token: ProviderTokenCache.Token? = nil
        var pending: APNSStreamResult? = nil
        if let first {
            (pending, token) = first
        } else if let cache {
            token = try providerToken { () throws(ProviderTokenError) in try cache.current() }
        }
        var refreshed = false
        var movedForKey = false
        var refusals = 0
        var requeues = 0
        while true {
            let result: APNSStreamResult
            if let taken = pending {
                result = taken
                pending = nil
            } else {
                result = await attempt(request, bearerToken: token?.value)
            }
            switch result {
            case .response(let outcome) where outcome.status == 403 && outcome.reason == .unrelatedKeyIdInToken:
                // The connection was replaced in `attempt`; retry once on a new one.
                guard !movedForKey else { return outcome }
                movedForKey = true
                logger.debug("APNs answered UnrelatedKeyIdInToken; retrying on a new connection")
            case .response(let outcome):
                guard let cache, let rejected = token, outcome.status == 403,
                    outcome.reason == .expiredProviderToken, !refreshed
                else { return outcome }
                refreshed = true
                token = try providerToken { () throws(ProviderTokenError) in try cache.refresh(after: rejected) }
                logger.debug("APNs provider token expired; retrying with a refreshed token")
            case .refused(let error):
                refusals += 1
                guard refusals < Self.maximumAttempts else { throw error }
                logger.debug("APNs request not processed; retrying", metadata: ["error": "\(error)"])
            case .notSent(let error):
                requeues += 1
                guard requeues <= Self.maximumRequeues else { throw error }
                logger.debug("APNs request not sent; moving it to another connection", metadata: ["error": "\(error)"])
            case .failure(let error):
                throw error
            }
        }
    }

    /// A try's result if it is final, or nil if ``sendWithRetries(_:after:)`` has more to do with it: a refused
    /// stream, a request its connection never sent, or a 403 that a refreshed provider token (ExpiredProviderToken)
    /// or a new connection (UnrelatedKeyIdInToken) may cure. A batch finishes those after its first tries.
    static func finalResult(ofFirstTry result: APNSStreamResult) -> Result<APNSOutcome, APNSTransportError>? {
        switch result {
        case .response(let outcome)
        where outcome.status == 403
            && (outcome.reason == .expiredProviderToken || outcome.reason == .unrelatedKeyIdInToken):
            return nil
        case .response(let outcome): return .success(outcome)
        case .failure(let error): return .failure(error)
        case .notSent, .refused: return nil
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
    ) throws(APNSTransportError) -> ProviderTokenCache.Token {
        do {
            return try body()
        } catch {
            throw APNSTransportError(.providerToken, "could not sign a provider token", underlying: error)
        }
    }

    /// One try: room in the client, a connection, a stream, an answer.
    private func attempt(_ request: APNSRequest, bearerToken: String?) async -> APNSStreamResult {
        let lease: Pool.Lease
        switch await acquire() {
        case .success(let leased):
            lease = leased
        case .failure(let error):
            return .failure(error)
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<APNSStreamResult, Never>) in
            lease.connection.enqueue(
                APNSPendingRequest(request: request, bearerToken: bearerToken, receiver: .task(continuation))
            )
        }
        finish(lease, with: result)
        return result
    }

    /// What one try teaches about its connection, then its room passes on. Called once per lease, on any thread.
    func finish(_ lease: Pool.Lease, with result: APNSStreamResult) {
        switch result {
        case .notSent, .refused:
            if !lease.connection.isAcceptingRequests {
                // The connection is going away; make sure the next try does not pick it again even if its own
                // notice has not reached the pool yet.
                pool.withLock { $0.connectionUnusable(lease.connection) }
            }
        case .response(let outcome):
            lease.connection.recordAnswer()
            if outcome.status == 403, outcome.reason == .unrelatedKeyIdInToken {
                // APNs binds a connection to the key of its first push: this key needs a connection of its own.
                replace(lease.connection, APNSTransportError(.protocolError, "APNs answered UnrelatedKeyIdInToken"))
            }
        case .failure(let error):
            if error.code == .timeout, lease.connection.recordTimeout() >= Self.timeoutsBeforeReplacing {
                // Repeated silence (pushy#476, node-apn#665): this connection is suspect; new requests go elsewhere.
                logger.warning("APNs connection replaced after repeated timeouts")
                replace(
                    lease.connection,
                    APNSTransportError(.timeout, "the connection was replaced after repeated timeouts"))
            }
        }
        release(lease)
    }

    /// Consecutive request timeouts after which a connection is replaced.
    static let timeoutsBeforeReplacing = 3

    /// Takes `connection` out of the pool and retires it: the next request opens a new one.
    private func replace(_ connection: APNSConnection, _ reason: APNSTransportError) {
        metrics.connectionsReplaced.increment()
        pool.withLock { $0.connectionUnusable(connection) }
        connection.retire(reason)
    }

    private func makeConnection() -> APNSConnection {
        guard case .success(let sslContext) = sslContext else { preconditionFailure("checked before leasing") }
        return APNSConnection(
            id: ids.wrappingAdd(1, ordering: .relaxed).newValue,
            eventLoop: eventLoopGroup.next(),
            configuration: configuration,
            sslContext: sslContext,
            metrics: metrics,
            logger: logger
        ) { [weak self] connection in
            self?.pool.withLock { $0.connectionUnusable(connection) }
        }
    }

    private func start(_ connection: APNSConnection) {
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.pool.withLock { $0.connectionClosed(connection) }
        }
        connection.start()
    }

    func acquire() async -> Result<Pool.Lease, APNSTransportError> {
        switch tryAcquire() {
        case .leased(let lease): return .success(lease)
        case .fail(let error): return .failure(error)
        case .wait: return await waitForRoom()
        }
    }

    /// Room and a connection if the client has room now; never waits. Whoever takes a lease of a new connection from
    /// the pool starts it, once: here, in `waitForRoom`, or in `release` for the waiter it passes room to.
    func tryAcquire(preferring slot: Int? = nil) -> Pool.AcquireAction {
        if case .failure(let error) = sslContext { return .fail(error) }
        let action = pool.withLock { pool in
            pool.acquire(waiter: nil, preferring: slot, makeConnection: makeConnection)
        }
        if case .leased(let lease) = action, lease.isNew { start(lease.connection) }
        return action
    }

    /// Waits until a finished request passes its room on (or the client shuts down, or the task is cancelled).
    private func waitForRoom() async -> Result<Pool.Lease, APNSTransportError> {
        let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Pool.Waiter) in
                let action = pool.withLock { pool in
                    pool.acquire(waiter: (id, continuation), makeConnection: makeConnection)
                }
                switch action {
                case .leased(let lease):
                    if lease.isNew { start(lease.connection) }
                    continuation.resume(returning: .success(lease))
                case .fail(let error): continuation.resume(returning: .failure(error))
                case .wait: break
                }
            }
        } onCancel: {
            if let waiter = pool.withLock({ $0.cancelWaiter(id: id) }) {
                waiter.resume(returning: .failure(APNSTransportError(.cancelled, "cancelled while waiting for room")))
            }
        }
    }

    /// Gives a lease's room back (to a waiter if one waits).
    func release(_ lease: Pool.Lease) {
        if let (waiter, next) = pool.withLock({ $0.release(lease, makeConnection: makeConnection) }) {
            if next.isNew { start(next.connection) }
            waiter.resume(returning: .success(next))
        }
    }

    /// Fails requests still waiting for room or for a stream with ``APNSTransportError/Code/shutDown``, lets
    /// in-flight requests finish (within their timeout), then closes every connection with GOAWAY.
    public func shutdown() async {
        let (waiters, connections) = pool.withLock { $0.shutdown() }
        for waiter in waiters {
            waiter.resume(returning: .failure(APNSTransportError(.shutDown, "the client was shut down")))
        }
        for connection in connections { connection.shutdown() }
        for connection in connections { try? await connection.closeFuture.get() }
        logger.debug("APNs client shut down")
    }
}
