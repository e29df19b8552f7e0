import Logging
import NIOCore

/// A Web Push client for one push service origin (`https://web.push.apple.com`, `https://fcm.googleapis.com`, …): a
/// pool of HTTP/2 connections to it, on the same libnghttp2 stack as APNs' and FCM's clients. Every request is one
/// RFC 8030 push to one subscription's endpoint, with the origin's VAPID `authorization` (RFC 8292), the same for
/// every request until the caller's cache renews it.
///
/// The push service's answers, errors included, are returned as ``WireResponse`` (status, `Retry-After`, body) for
/// the caller to read with WebPushCore; only a transport failure throws. A request that provably never reached the
/// server goes to another connection; nothing else is retried here (a re-sent push is shown twice: there is no
/// message id to deduplicate by), so the caller decides what to send again and when.
public final class WebPushClient: PooledClient {
    typealias Credential = String

    private let authorization: @Sendable () -> String
    let pool: ConnectionPool
    var logger: Logger { pool.logger }
    var metrics: TransportMetrics { pool.metrics }

    /// Creates a client; nothing connects until the first send.
    ///
    /// - Parameter authorization: the origin's current VAPID header value (`vapid t=<JWT>, k=<key>`), asked once per
    ///   batch and once per single send: a cache that signs once per origin and renews before expiry.
    public init(
        configuration: WebPushClientConfiguration, authorization: @escaping @Sendable () -> String,
        eventLoopGroup: any EventLoopGroup, logger: Logger
    ) {
        self.authorization = authorization
        self.pool = ConnectionPool(
            settings: configuration.connectionSettings, eventLoopGroup: eventLoopGroup,
            metrics: TransportMetrics(provider: .webpush), logger: logger)
    }

    /// Sends one push and returns the service's answer.
    public func send(_ request: WebPushWireRequest) async throws(TransportError) -> WireResponse {
        let start = NIODeadline.now()
        let result: Result<WireResponse, TransportError>
        do {
            result = .success(try await sendWithRetries(request, after: nil))
        } catch {
            result = .failure(error)
        }
        metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        record(result)
        return try result.get()
    }

    /// Sends many pushes with at most `concurrency` in flight and returns each one's result, in order; see
    /// ``PooledClient/sendBatch(count:concurrency:request:onAnswer:)``. `request` is called when a push's turn
    /// comes (its body is encrypted then, on the event loop that sends it).
    public func sendAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> WebPushWireRequest?,
        onAnswer: @escaping @Sendable (Int, Result<WireResponse, TransportError>) -> Void
    ) async -> [Result<WireResponse, TransportError>?] {
        await sendBatch(count: count, concurrency: concurrency, request: request, onAnswer: onAnswer)
    }

    func sendWithRetries(
        _ request: WebPushWireRequest, after first: (result: StreamResult, credential: String?)?
    ) async throws(TransportError) -> WireResponse {
        var pending = first?.result
        let token = first?.credential ?? authorization()
        var retries = TransportRetries()
        while true {
            let result: StreamResult
            if let taken = pending {
                result = taken
                pending = nil
            } else {
                let (answer, lease) = await pool.attempt(.webpush(request), bearerToken: token)
                if let lease { finish(lease, with: answer) }
                result = answer
            }
            switch result {
            case .response(let response):
                return response
            case .refused, .notSent, .failure:
                try retries.another(after: result)
            }
        }
    }

    func isFinal(_ result: StreamResult) -> Bool {
        switch result {
        case .response, .failure: true
        case .notSent, .refused: false
        }
    }

    static func answer(_ response: WireResponse) -> WireResponse { response }

    func finish(_ lease: ConnectionPool.Lease, with result: StreamResult) {
        pool.finish(lease, with: result)
    }

    func credential() async throws(TransportError) -> String? { authorization() }

    static func bearer(of credential: String) -> String { credential }

    func wire(_ request: WebPushWireRequest) -> WireRequest { .webpush(request) }

    static func request(of wire: WireRequest) -> WebPushWireRequest {
        guard case .webpush(let request) = wire else {
            preconditionFailure("a Web Push client sent another provider's request")
        }
        return request
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
        logger.debug("Web Push client shut down")
    }
}

/// How a ``WebPushClient`` reaches one push service origin: where, trust, pool size and timeouts.
public struct WebPushClientConfiguration: Sendable {
    /// The push service's host and port (the endpoints' origin).
    public var endpoint: HTTP2Endpoint
    /// Extra CA certificates (PEM text) trusted in addition to the system roots (a simulator, a proxy).
    public var additionalTrustRootsPEM: [String] = []
    /// How many HTTP/2 connections the pool may open to the origin; they open as the load needs them.
    public var connections: Int = 4
    /// The most streams one connection opens (push services allow about 100; some fewer by SETTINGS).
    public var maximumStreamsPerConnection: Int = 100
    /// How long one attempt may wait for its answer (queued for a stream plus in flight).
    public var requestTimeout: Duration = .seconds(10)
    /// The most requests the client holds at once (waiting for a stream or in flight); further sends wait.
    public var maximumQueuedRequests: Int = 10_000
    /// How long TCP connect plus the TLS handshake may take.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a connection may sit without traffic before a PING checks it; nil disables the check.
    public var pingInterval: Duration? = .seconds(60)
    /// How many HTTP/1.1 connections ``WebPushHTTP1Client`` keeps to a service that does not speak HTTP/2 (each
    /// carries one request at a time).
    public var http1Connections: Int = 16

    public init(endpoint: HTTP2Endpoint, additionalTrustRootsPEM: [String] = [], connections: Int = 4) {
        self.endpoint = endpoint
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
        self.connections = connections
    }

    /// What each pooled connection needs. ALPN offers `http/1.1` after `h2`: a service without HTTP/2 then picks it,
    /// the connection fails with `alpnNotH2` before any request is sent, and the caller falls back to
    /// ``WebPushHTTP1Client``.
    var connectionSettings: HTTP2ConnectionSettings {
        var settings = HTTP2ConnectionSettings(
            endpoint: endpoint, clientCertificate: nil, additionalTrustRootsPEM: additionalTrustRootsPEM,
            connections: connections, maximumQueuedRequests: maximumQueuedRequests, requestTimeout: requestTimeout,
            connectTimeout: connectTimeout, pingInterval: pingInterval,
            maximumStreamsPerConnection: maximumStreamsPerConnection, label: "webpush")
        settings.applicationProtocols = ["h2", "http/1.1"]
        return settings
    }
}
