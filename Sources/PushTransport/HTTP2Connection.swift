import APNSCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One pooled HTTP/2 connection as the rest of the client sees it: a thread-safe inbox in front of the channel
/// handler, which lives on the connection's event loop.
///
/// Callers put requests into the inbox from any thread; the first one into an empty inbox schedules one drain on the
/// event loop, so a burst of requests costs one event-loop task and one flush.
final class HTTP2Connection: Sendable {
    private enum State {
        /// TCP, TLS and ALPN in progress; requests wait here.
        case connecting(inbox: [PendingRequest])
        /// The session runs; `drainScheduled` is true while a drain task is on its way to the event loop.
        case active(handler: NIOLoopBound<HTTP2ConnectionHandler>, inbox: [PendingRequest], drainScheduled: Bool)
        /// GOAWAY received or shutting down: in-flight streams finish, nothing new is accepted.
        case draining(handler: NIOLoopBound<HTTP2ConnectionHandler>)
        /// Gone.
        case closed(TransportError)
    }

    /// Unique within the process, for logs and for the pool to tell replaced connections apart.
    let id: Int
    private let consecutiveTimeouts = Atomic(0)
    let eventLoop: any EventLoop
    private let state: Mutex<State> = Mutex(.connecting(inbox: []))
    private let closed: EventLoopPromise<Void>
    private let channel = Mutex<(any Channel)?>(nil)
    /// The running handler, for requests handed over on the event loop itself (a batch sending its next request
    /// from the answer to the previous one): they go straight to the handler, without the inbox, its lock and a
    /// drain task. Set while the session runs; read and written only on the event loop.
    private let handlerOnLoop: NIOLoopBoundBox<HTTP2ConnectionHandler?>
    private let onUnusable: @Sendable (HTTP2Connection) -> Void
    private let configuration: HTTP2ConnectionSettings
    private let sslContext: NIOSSLContext
    private let metrics: TransportMetrics
    private let logger: Logger

    /// - Parameter onUnusable: called once when the connection stops accepting requests (GOAWAY, failure, close),
    ///   so that the pool replaces it.
    init(
        id: Int,
        eventLoop: any EventLoop,
        configuration: HTTP2ConnectionSettings,
        sslContext: NIOSSLContext,
        metrics: TransportMetrics,
        logger: Logger,
        onUnusable: @escaping @Sendable (HTTP2Connection) -> Void
    ) {
        self.id = id
        self.eventLoop = eventLoop
        self.closed = eventLoop.makePromise()
        self.handlerOnLoop = .makeEmptyBox(valueType: HTTP2ConnectionHandler.self, eventLoop: eventLoop)
        self.configuration = configuration
        self.sslContext = sslContext
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "\(configuration.label)_connection"] = "\(id)"
        self.logger = logger
        self.onUnusable = onUnusable
    }

    /// Completes when every request the connection held has been answered or failed and its channel is closed.
    var closeFuture: EventLoopFuture<Void> {
        closed.futureResult.flatMap {
            self.channel.withLock { $0 }?.closeFuture ?? self.eventLoop.makeSucceededVoidFuture()
        }
    }

    // MARK: Connecting

    /// Connects TCP, then TLS with ALPN `h2`; the handler takes over from there.
    func start() {
        let endpoint = configuration.endpoint
        // NIOSSL refuses IP literals as SNI; without a server name it checks the certificate against the peer's IP.
        let serverName = Self.isIPAddress(endpoint.host) ? nil : endpoint.host
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: serverName)
                    let handler = HTTP2ConnectionHandler(
                        connection: self,
                        configuration: configuration,
                        metrics: metrics,
                        logger: logger
                    )
                    try channel.pipeline.syncOperations.addHandlers(tls, handler)
                }
            }
        logger.debug("\(configuration.providerName) connection connecting", metadata: ["endpoint": "\(endpoint)"])
        bootstrap.connect(host: endpoint.host, port: endpoint.port).whenComplete { result in
            switch result {
            case .success(let channel):
                self.channel.withLock { $0 = channel }
                // Shut down while the TCP connect was in progress.
                if self.isClosed { channel.close(promise: nil) }
            case .failure(let error):
                self.handlerDidClose(
                    TransportError(.connectFailed, "could not connect to \(endpoint)", underlying: error)
                )
            }
        }
    }

    /// Whether new requests can still go to this connection (connecting or active).
    var isAcceptingRequests: Bool {
        state.withLock { state in
            switch state {
            case .connecting, .active: return true
            case .draining, .closed: return false
            }
        }
    }

    private var isClosed: Bool {
        state.withLock { state in
            if case .closed = state { return true }
            return false
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    // MARK: Requests (any thread)

    /// Hands a request to the connection. If the connection no longer takes requests the receiver gets a retry (or the
    /// connection's failure) at once, so the caller never waits on a dead connection.
    func enqueue(_ request: PendingRequest) {
        if eventLoop.inEventLoop, let handler = handlerOnLoop.value, handler.acceptOnLoop(request) { return }
        enum Action {
            case none
            case schedule(NIOLoopBound<HTTP2ConnectionHandler>)
            case reject(StreamResult)
        }
        let action = state.withLock { state -> Action in
            switch state {
            case .connecting(var inbox):
                inbox.append(request)
                state = .connecting(inbox: inbox)
                return .none
            case .active(let handler, var inbox, let drainScheduled):
                inbox.append(request)
                state = .active(handler: handler, inbox: inbox, drainScheduled: true)
                return drainScheduled ? .none : .schedule(handler)
            case .draining:
                return .reject(.notSent(TransportError(.goAway, "the connection is draining")))
            case .closed(let error):
                return .reject(Self.resultForUnsent(error))
            }
        }
        switch action {
        case .none:
            break
        case .schedule(let handler):
            eventLoop.execute { handler.value.drainInbox() }
        case .reject(let result):
            // Later, on the event loop: a batch answers a rejection by enqueueing its next request, which must not
            // recurse through here once per request of the batch.
            eventLoop.execute { request.receiver.deliver(result, for: request.request) }
        }
    }

    /// Takes the connection out of service without failing anyone: no new streams start on it, requests still
    /// waiting for a stream move to another connection, in-flight ones finish, and it closes once idle.
    func retire(_ reason: TransportError) {
        let handler = state.withLock { state -> NIOLoopBound<HTTP2ConnectionHandler>? in
            if case .active(let handler, _, _) = state { return handler }
            return nil
        }
        if let handler { eventLoop.execute { handler.value.retire(reason) } }
    }

    /// Counts a request that got no answer in time; returns how many timed out in a row. An answer resets it.
    func recordTimeout() -> Int { consecutiveTimeouts.add(1, ordering: .relaxed).newValue }

    /// An answer arrived: the connection is alive.
    func recordAnswer() { consecutiveTimeouts.store(0, ordering: .relaxed) }

    /// Closes gracefully: queued requests fail with `shutDown`, in-flight ones finish (bounded by their deadline).
    func shutdown() {
        let handler = state.withLock { state -> NIOLoopBound<HTTP2ConnectionHandler>? in
            switch state {
            case .connecting, .closed:
                return nil
            case .active(let handler, _, _), .draining(let handler):
                return handler
            }
        }
        if let handler {
            eventLoop.execute { handler.value.beginShutdown() }
        } else {
            // Still connecting: fail what waits and drop the channel if TCP is up (the handler then sees it close).
            handlerDidClose(TransportError(.shutDown, "the client was shut down"))
            channel.withLock { $0 }?.close(promise: nil)
        }
    }

    // MARK: Handler callbacks (event loop)

    /// The session runs: returns the requests that arrived while connecting.
    func handlerDidBecomeActive(_ handler: NIOLoopBound<HTTP2ConnectionHandler>) -> [PendingRequest] {
        let result = state.withLock { state -> [PendingRequest]? in
            guard case .connecting(let inbox) = state else { return nil }
            state = .active(handler: handler, inbox: [], drainScheduled: false)
            return inbox
        }
        guard let result else {
            // Shut down while connecting: close right away.
            handler.value.beginShutdown()
            return []
        }
        handlerOnLoop.value = handler.value
        return result
    }

    /// Takes the requests queued since the last drain.
    func takeInbox() -> [PendingRequest] {
        state.withLock { state in
            guard case .active(let handler, let inbox, _) = state else { return [] }
            state = .active(handler: handler, inbox: [], drainScheduled: false)
            return inbox
        }
    }

    /// The connection retires (GOAWAY, stream ids used up): stop taking requests; returns the ones queued meanwhile
    /// (to be retried elsewhere).
    func handlerDidRetire() -> [PendingRequest] {
        handlerOnLoop.value = nil
        let inbox = state.withLock { state -> [PendingRequest]? in
            guard case .active(let handler, let inbox, _) = state else { return nil }
            state = .draining(handler: handler)
            return inbox
        }
        guard let inbox else { return [] }
        onUnusable(self)
        return inbox
    }

    /// The channel is closing and its streams are about to be failed: the pool stops choosing it first, so that
    /// requests sent in answer to those failures go to another connection.
    func handlerWillClose() {
        handlerOnLoop.value = nil
        onUnusable(self)
    }

    /// The handler is shutting down: requests made on the loop go through the inbox again, which refuses them.
    func handlerStopsTakingRequests() { handlerOnLoop.value = nil }

    /// The channel closed (or never opened): fail or hand back what is still queued, once.
    func handlerDidClose(_ error: TransportError) {
        let taken = state.withLock { state -> (inbox: [PendingRequest], wasConnecting: Bool)? in
            switch state {
            case .connecting(let inbox):
                state = .closed(error)
                return (inbox, true)
            case .active(_, let inbox, _):
                state = .closed(error)
                return (inbox, false)
            case .draining:
                state = .closed(error)
                return ([], false)
            case .closed:
                return nil
            }
        }
        guard let (inbox, wasConnecting) = taken else { return }
        // Out of the pool before anyone hears of it: a batch that answers by sending its next request must not
        // pick this connection again.
        onUnusable(self)
        // Requests that waited for a connection that never came up fail with its error: retrying them on a fresh
        // connection would most likely fail the same way (bad trust, unreachable host).
        for request in inbox {
            request.receiver.deliver(
                wasConnecting ? .failure(error) : Self.resultForUnsent(error), for: request.request)
        }
        logger.debug("\(configuration.providerName) connection closed", metadata: ["reason": "\(error)"])
        closed.succeed()
    }

    private static func resultForUnsent(_ error: TransportError) -> StreamResult {
        error.requestWasNotSent ? .failure(error) : .notSent(error)
    }
}
