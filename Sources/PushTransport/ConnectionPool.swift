import Logging
import NIOCore
import NIOSSL
import Synchronization

/// A pool of HTTP/2 connections to one endpoint, shared by whichever provider's client owns it: connections open
/// lazily, each request goes to the connection with the fewest outstanding requests, and at most
/// ``HTTP2ConnectionSettings/maximumQueuedRequests`` requests are held at once (further ones wait for room).
final class ConnectionPool: Sendable {
    typealias Machine = PoolStateMachine<HTTP2Connection>
    typealias Lease = Machine.Lease

    let settings: HTTP2ConnectionSettings
    private let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let metrics: TransportMetrics
    private let sslContext: Result<NIOSSLContext, TransportError>
    private let machine: Mutex<Machine>
    private let ids = Atomic<Int>(0)

    init(
        settings: HTTP2ConnectionSettings, eventLoopGroup: any EventLoopGroup, metrics: TransportMetrics, logger: Logger
    ) {
        self.settings = settings
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.metrics = metrics
        self.sslContext = Self.makeSSLContext(settings)
        self.machine = Mutex(
            Machine(
                connections: settings.connections, limit: settings.maximumQueuedRequests,
                fillingUpTo: settings.maximumStreamsPerConnection))
    }

    /// TLS 1.2 or later, ALPN `h2` (and what else the settings offer after it), full certificate verification
    /// against the system roots plus the configured CAs.
    private static func makeSSLContext(_ settings: HTTP2ConnectionSettings) -> Result<NIOSSLContext, TransportError> {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = settings.applicationProtocols
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .default
        if let (chain, privateKey) = settings.clientCertificate {
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(privateKey)
        }
        do {
            for pem in settings.additionalTrustRootsPEM {
                let certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
                guard !certificates.isEmpty else {
                    return .failure(TransportError(.tlsFailed, "an additional trust root holds no certificate"))
                }
                tls.additionalTrustRoots.append(.certificates(certificates))
            }
            return .success(try NIOSSLContext(configuration: tls))
        } catch {
            return .failure(TransportError(.tlsFailed, "invalid TLS configuration", underlying: error))
        }
    }

    /// One try on a leased connection: the request waits for a stream there and the result comes back.
    func attempt(_ request: WireRequest, bearerToken: String?) async -> (StreamResult, Lease?) {
        let lease: Lease
        switch await acquire() {
        case .success(let leased):
            lease = leased
        case .failure(let error):
            return (.failure(error), nil)
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<StreamResult, Never>) in
            lease.connection.enqueue(
                PendingRequest(request: request, bearerToken: bearerToken, receiver: .task(continuation))
            )
        }
        return (result, lease)
    }

    /// What one try teaches about its connection, then its room passes on. Called once per lease, on any thread.
    /// `replace` names a reason to retire the connection (an answer that binds the connection to something else).
    func finish(_ lease: Lease, with result: StreamResult, replacing reason: TransportError? = nil) {
        switch result {
        case .notSent, .refused:
            if !lease.connection.isAcceptingRequests {
                // The connection is going away; make sure the next try does not pick it again even if its own
                // notice has not reached the pool yet.
                machine.withLock { $0.connectionUnusable(lease.connection) }
            }
        case .response:
            lease.connection.recordAnswer()
            if let reason { replace(lease.connection, reason) }
        case .failure(let error):
            if error.code == .timeout, lease.connection.recordTimeout() >= Self.timeoutsBeforeReplacing {
                // Repeated silence (pushy#476, node-apn#665): this connection is suspect; new requests go elsewhere.
                logger.warning("\(settings.providerName) connection replaced after repeated timeouts")
                replace(
                    lease.connection,
                    TransportError(.timeout, "the connection was replaced after repeated timeouts"))
            }
        }
        release(lease)
    }

    /// Consecutive request timeouts after which a connection is replaced.
    static let timeoutsBeforeReplacing = 3

    /// Takes `connection` out of the pool and retires it: the next request opens a new one.
    private func replace(_ connection: HTTP2Connection, _ reason: TransportError) {
        metrics.connectionsReplaced.increment()
        machine.withLock { $0.connectionUnusable(connection) }
        connection.retire(reason)
    }

    private func makeConnection() -> HTTP2Connection {
        guard case .success(let sslContext) = sslContext else { preconditionFailure("checked before leasing") }
        return HTTP2Connection(
            id: ids.wrappingAdd(1, ordering: .relaxed).newValue,
            eventLoop: eventLoopGroup.next(),
            configuration: settings,
            sslContext: sslContext,
            metrics: metrics,
            logger: logger
        ) { [weak self] connection in
            self?.machine.withLock { $0.connectionUnusable(connection) }
        }
    }

    private func start(_ connection: HTTP2Connection) {
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.machine.withLock { $0.connectionClosed(connection) }
        }
        connection.start()
    }

    func acquire() async -> Result<Lease, TransportError> {
        switch tryAcquire() {
        case .leased(let lease): return .success(lease)
        case .fail(let error): return .failure(error)
        case .wait: return await waitForRoom()
        }
    }

    /// Room and a connection if the pool has room now; never waits. Whoever takes a lease of a new connection from
    /// the pool starts it, once: here, in `waitForRoom`, or in `release` for the waiter it passes room to.
    func tryAcquire(preferring slot: Int? = nil) -> Machine.AcquireAction {
        if case .failure(let error) = sslContext { return .fail(error) }
        let action = machine.withLock { pool in
            pool.acquire(waiter: nil, preferring: slot, makeConnection: makeConnection)
        }
        if case .leased(let lease) = action, lease.isNew { start(lease.connection) }
        return action
    }

    /// Waits until a finished request passes its room on (or the pool shuts down, or the task is cancelled).
    private func waitForRoom() async -> Result<Lease, TransportError> {
        let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Machine.Waiter) in
                let action = machine.withLock { pool in
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
            if let waiter = machine.withLock({ $0.cancelWaiter(id: id) }) {
                waiter.resume(returning: .failure(TransportError(.cancelled, "cancelled while waiting for room")))
            }
        }
    }

    /// Gives a lease's room back (to a waiter if one waits).
    func release(_ lease: Lease) {
        if let (waiter, next) = machine.withLock({ $0.release(lease, makeConnection: makeConnection) }) {
            if next.isNew { start(next.connection) }
            waiter.resume(returning: .success(next))
        }
    }

    /// Fails requests still waiting for room or for a stream with ``TransportError/Code/shutDown``, lets in-flight
    /// requests finish (within their timeout), then closes every connection with GOAWAY.
    func shutdown() async {
        let (waiters, connections) = machine.withLock { $0.shutdown() }
        for waiter in waiters {
            waiter.resume(returning: .failure(TransportError(.shutDown, "the client was shut down")))
        }
        for connection in connections { connection.shutdown() }
        for connection in connections { try? await connection.closeFuture.get() }
    }
}
