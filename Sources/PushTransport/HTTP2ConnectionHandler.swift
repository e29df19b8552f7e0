import APNSCore
import CNGHTTP2
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// The HTTP/2 client of one pooled connection (to APNs or FCM): a channel handler after `NIOSSLClientHandler` that owns an
/// `nghttp2_session` used as a pure state machine.
///
/// TLS plaintext goes into `nghttp2_session_mem_recv`; whatever nghttp2 wants to send is drained with
/// `nghttp2_session_mem_send` into one buffer and written with one flush per event-loop cycle, however many requests
/// were submitted in that cycle. Every method runs on the channel's event loop.
final class HTTP2ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum State {
        /// Waiting for the TLS handshake and ALPN.
        case handshaking
        /// The HTTP/2 session is running.
        case active
        /// The channel is gone; everything has been failed.
        case closed
    }

    private(set) var state: State = .handshaking
    let connection: HTTP2Connection
    let metrics: TransportMetrics
    var logger: Logger
    let requestTimeout: TimeAmount
    private let connectTimeout: TimeAmount
    let pingInterval: TimeAmount?
    /// The client's own cap on open streams (``HTTP2ConnectionSettings/maximumStreamsPerConnection``).
    let streamCap: Int
    /// The provider as log messages name it.
    let providerName: String

    private(set) var context: ChannelHandlerContext?
    var session: OpaquePointer?
    /// Streams submitted to nghttp2 and not yet closed, by stream id.
    var streams: [Int32: HTTP2Stream] = [:]
    /// Requests waiting for the server to allow another stream, oldest (earliest deadline) first.
    var waiting = CircularBuffer<HTTP2Stream>(initialCapacity: 64)
    var headerEncoder: RequestHeaderEncoder
    let dataProvider = nghttp2_data_provider(source: nghttp2_data_source(), read_callback: apnsReadRequestBody)

    var flushScheduled = false
    /// Requests submitted to nghttp2 since the last flush.
    var unflushedRequests = 0
    /// Open streams whose body nghttp2 has not taken in full yet (waiting for the write, or for flow control).
    var pendingBodies = 0
    /// Of those, the ones submitted since the last flush.
    var unflushedBodies = 0
    /// Flushes requests held back by ``holdsBackWrite()`` if no answer brings the write first.
    var holdTimer: Scheduled<Void>?
    /// True while nghttp2 reads a buffer: stream events then leave the flush to `channelReadComplete`.
    private(set) var inRead = false
    var timeoutTimer: Scheduled<Void>?
    private var handshakeTimer: Scheduled<Void>?
    var pingTimer: Scheduled<Void>?
    var sawTrafficSincePing = true
    var pingOutstanding = false
    /// Set when the server sent GOAWAY: streams above it were never processed.
    var goAwayLastStreamID: Int32?
    /// Set when the client shuts down: no new streams, close when the last one finishes.
    var shuttingDown = false
    /// Set after GOAWAY or when stream ids run out: no new streams, close when the last one finishes.
    var retiring = false
    /// The reason the connection ends, reported to requests that it fails.
    var closeReason: TransportError?

    init(
        connection: HTTP2Connection,
        configuration: HTTP2ConnectionSettings,
        metrics: TransportMetrics,
        logger: Logger
    ) {
        self.connection = connection
        self.metrics = metrics
        self.logger = logger
        self.requestTimeout = TimeAmount(configuration.requestTimeout)
        self.connectTimeout = TimeAmount(configuration.connectTimeout)
        self.pingInterval = configuration.pingInterval.map(TimeAmount.init)
        self.streamCap = configuration.maximumStreamsPerConnection ?? .max
        self.providerName = configuration.providerName
        let endpoint = configuration.endpoint
        self.headerEncoder = RequestHeaderEncoder(
            authority: endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)"
        )
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { startHandshakeTimer(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close(reason: TransportError(.connectionClosed, "the connection handler was removed"))
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startHandshakeTimer(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        close(reason: TransportError(.connectionClosed, "the connection closed"))
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            handshakeTimer?.cancel()
            handshakeTimer = nil
            guard negotiated == "h2" else {
                fail(
                    context: context,
                    TransportError(
                        .alpnNotH2,
                        "the server did not negotiate HTTP/2 with ALPN (got \(negotiated ?? "nothing"))"
                    )
                )
                return
            }
            startSession(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        switch state {
        case .handshaking:
            fail(context: context, TransportError(.tlsFailed, "the TLS handshake failed", underlying: error))
        case .active:
            fail(
                context: context,
                TransportError(.connectionClosed, "the connection failed", underlying: error)
            )
        case .closed:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session, case .active = state else { return }
        let buffer = unwrapInboundIn(data)
        sawTrafficSincePing = true
        inRead = true
        let result = buffer.withUnsafeReadableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            return nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        inRead = false
        if result < 0 {
            // nghttp2 has queued a GOAWAY for a protocol error; send it, then close.
            flush()
            fail(context: context, .nghttp2(result, "the server broke the HTTP/2 protocol"))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard case .active = state else {
            context.fireChannelReadComplete()
            return
        }
        startWaitingStreams()
        if !holdsBackWrite() { flush() }
        context.fireChannelReadComplete()
    }

    // MARK: Session lifecycle

    private func startHandshakeTimer(context: ChannelHandlerContext) {
        guard handshakeTimer == nil, case .handshaking = state else { return }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        handshakeTimer = context.eventLoop.scheduleTask(in: connectTimeout) {
            let handler = loopBound.value
            guard case .handshaking = handler.state, let context = handler.context else { return }
            handler.fail(context: context, TransportError(.timeout, "the TLS handshake timed out"))
        }
    }

    private func startSession(context: ChannelHandlerContext) {
        let result = makeClientSession(userData: Unmanaged.passUnretained(self).toOpaque())
        switch result {
        case .failure(let error):
            fail(context: context, error)
            return
        case .success(let session):
            self.session = session
        }
        state = .active
        logger.debug("\(providerName) connection established")
        metrics.connectionsOpen.increment()
        metrics.connectionsOpened.increment()
        schedulePing()
        // The client preface and SETTINGS go out now; requests follow once the connection hands them over.
        let pending = connection.handlerDidBecomeActive(NIOLoopBound(self, eventLoop: context.eventLoop))
        accept(pending)
        flush()
    }

    /// Fails everything and closes the channel.
    func fail(context: ChannelHandlerContext, _ error: TransportError) {
        if closeReason == nil { closeReason = error }
        if case .closed = state { return }
        logger.debug("\(providerName) connection failed", metadata: ["error": "\(error)"])
        context.close(promise: nil)
        close(reason: error)
    }

    /// Ends the connection's work: fails or hands back every request and releases the nghttp2 session.
    private func close(reason: TransportError) {
        if case .closed = state { return }
        let wasActive: Bool
        if case .active = state { wasActive = true } else { wasActive = false }
        state = .closed
        let reason = closeReason ?? reason
        closeReason = reason
        handshakeTimer?.cancel()
        holdTimer?.cancel()
        timeoutTimer?.cancel()
        pingTimer?.cancel()
        if wasActive { metrics.connectionsOpen.decrement() }
        connection.handlerWillClose()

        let inFlight = streams
        streams.removeAll()
        pendingBodies = 0
        if !inFlight.isEmpty {
            logger.debug(
                "\(providerName) connection closed with requests in flight",
                metadata: [
                    "in_flight": "\(inFlight.count)",
                    "stream_ids": "\(inFlight.keys.min()!)...\(inFlight.keys.max()!)",
                    "goaway_last_stream_id": "\(goAwayLastStreamID.map(String.init) ?? "none")",
                ]
            )
        }
        for (id, stream) in inFlight {
            metrics.streamsInFlight.decrement()
            if let last = goAwayLastStreamID, id > last {
                stream.complete(.refused(TransportError(.goAway, "the server did not process the stream")))
            } else if reason.code == .shutDown {
                stream.complete(.failure(reason))
            } else {
                stream.complete(
                    .failure(
                        TransportError(
                            .connectionClosed,
                            "the connection closed while the request was in flight",
                            underlying: reason
                        )
                    )
                )
            }
        }
        let queued = waiting
        waiting.removeAll()
        for stream in queued { stream.complete(resultForUnsent(reason)) }
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        connection.handlerDidClose(reason)
    }

    /// What a request that never left this (once active) connection gets when it closes: another try elsewhere,
    /// unless the client is shutting down.
    func resultForUnsent(_ reason: TransportError) -> StreamResult {
        reason.code == .shutDown ? .failure(reason) : .notSent(reason)
    }

}

@available(*, unavailable)
extension HTTP2ConnectionHandler: Sendable {}
