import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A Web Push client for a push service origin that does not speak HTTP/2: HTTP/1.1 with keep-alive, through
/// AsyncHTTPClient's connection pool. Each connection carries one request at a time, so the pool holds up to
/// ``WebPushClientConfiguration/http1Connections`` connections to the origin and reuses them.
///
/// The same contract as ``WebPushClient``: the service's answers, errors included, come back as ``WireResponse``
/// (status, `Retry-After`, the body capped as an HTTP/2 answer's is); only a transport failure throws, as a
/// ``TransportError`` whose description carries neither the endpoint's path nor the VAPID header. Nothing is sent
/// twice here: a push re-sent is shown twice.
public final class WebPushHTTP1Client: Sendable {
    private let http: HTTPClient
    private let authority: String
    private let authorization: @Sendable () -> String
    private let requestTimeout: Duration
    private let connections: Int
    private let logger: Logger
    private let metrics: TransportMetrics

    /// Creates a client; nothing connects until the first send.
    ///
    /// - Parameter authorization: the origin's current VAPID header value, asked once per request.
    public init(
        configuration: WebPushClientConfiguration, authorization: @escaping @Sendable () -> String,
        eventLoopGroup: any EventLoopGroup, logger: Logger
    ) {
        var http = HTTPClient.Configuration(
            tlsConfiguration: .client(trustingAlso: configuration.additionalTrustRootsPEM),
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.requestTimeout)),
            connectionPool: .init(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.http1Connections),
            ignoreUncleanSSLShutdown: false
        )
        http.httpVersion = .http1Only
        http.decompression = .disabled
        self.http = HTTPClient(
            eventLoopGroupProvider: .shared(eventLoopGroup), configuration: http, backgroundActivityLogger: logger)
        let endpoint = configuration.endpoint
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        self.authority = endpoint.port == 443 ? host : "\(host):\(endpoint.port)"
        self.authorization = authorization
        self.requestTimeout = configuration.requestTimeout
        self.connections = configuration.http1Connections
        self.logger = logger
        self.metrics = TransportMetrics(provider: .webpush)
    }

    /// Sends one push and returns the service's answer.
    public func send(_ request: WebPushWireRequest) async throws(TransportError) -> WireResponse {
        try await result(of: request).get()
    }

    /// One push's answer or failure, recorded in the metrics.
    private func result(of request: WebPushWireRequest) async -> Result<WireResponse, TransportError> {
        let start = NIODeadline.now()
        let result = await attempt(request)
        metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        switch result {
        case .success(let response): metrics.record(status: response.status, reason: nil)
        case .failure(let error): metrics.record(error)
        }
        return result
    }

    /// Sends many pushes, at most `concurrency` (and the pool's connections) at a time, and returns each one's
    /// result in order; nil where `request` gave none. `onAnswer` hears each result as it comes.
    public func sendAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> WebPushWireRequest?,
        onAnswer: @escaping @Sendable (Int, Result<WireResponse, TransportError>) -> Void
    ) async -> [Result<WireResponse, TransportError>?] {
        var results = [Result<WireResponse, TransportError>?](repeating: nil, count: count)
        let width = max(1, min(concurrency, connections))
        await withTaskGroup(of: (Int, Result<WireResponse, TransportError>?).self) { group in
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask {
                    guard let push = request(index) else { return (index, nil) }
                    let result = await self.result(of: push)
                    onAnswer(index, result)
                    return (index, result)
                }
            }
            while next < min(width, count) { start() }
            for await (index, result) in group {
                results[index] = result
                if next < count { start() }
            }
        }
        return results
    }

    /// One request and its answer, or the failure that stopped it.
    private func attempt(_ push: WebPushWireRequest) async -> Result<WireResponse, TransportError> {
        var request = HTTPClientRequest(url: "https://\(authority)\(push.path)")
        request.method = .POST
        request.headers.add(name: "authorization", value: authorization())
        request.headers.add(name: "ttl", value: String(push.ttl))
        request.headers.add(name: "urgency", value: push.urgency)
        if let topic = push.topic { request.headers.add(name: "topic", value: topic) }
        request.headers.add(name: "content-encoding", value: "aes128gcm")
        request.headers.add(name: "content-type", value: "application/octet-stream")
        request.body = .bytes(push.body)
        let deadline = NIODeadline.now() + TimeAmount(requestTimeout)
        do {
            let response = try await http.execute(request, deadline: deadline, logger: logger)
            // The body up to the cap an HTTP/2 answer has, within the request's deadline: AsyncHTTPClient's deadline
            // ends with the response head, and its read timeout bounds only the wait for each chunk. A body over the
            // cap, or one still coming at the deadline, is not read further (the connection is closed, not kept).
            var body: [UInt8] = []
            for try await chunk in response.body {
                body += chunk.readableBytesView.prefix(HTTP2Stream.maximumResponseBody - body.count)
                if body.count >= HTTP2Stream.maximumResponseBody { break }
                if NIODeadline.now() > deadline {
                    return .failure(TransportError(.timeout, "the push service did not finish its answer in time"))
                }
            }
            let retryAfter = response.headers.first(name: "retry-after").map {
                String(decoding: $0.utf8.prefix(64), as: UTF8.self)
            }
            return .success(
                WireResponse(
                    status: Int(response.status.code), apnsID: nil, apnsUniqueID: nil, retryAfter: retryAfter,
                    body: body))
        } catch {
            return .failure(Self.transportError(error))
        }
    }

    /// A failure by its kind, in the transport's codes; AsyncHTTPClient's and NIO's descriptions are not passed on
    /// (they may name the URL, whose path is the subscription's).
    static func transportError(_ error: any Error) -> TransportError {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return TransportError(.connectFailed, "the push service did not accept a connection in time")
            case .deadlineExceeded, .readTimeout:
                return TransportError(.timeout, "the push service did not answer in time")
            case .remoteConnectionClosed:
                return TransportError(.connectionClosed, "the push service closed the connection")
            case .alreadyShutdown:
                return TransportError(.shutDown, "the Web Push client is shut down")
            case .cancelled:
                return TransportError(.cancelled, "the request was cancelled")
            default:
                return TransportError(.protocolError, "the HTTP/1.1 exchange failed (\(error.shortDescription))")
            }
        }
        if error is CancellationError { return TransportError(.cancelled, "the request was cancelled") }
        if error is NIOSSLError || error is BoringSSLError {
            return TransportError(.tlsFailed, "the TLS handshake with the push service failed")
        }
        if error is NIOConnectionError || error is IOError || error is ChannelError {
            return TransportError(.connectFailed, "cannot connect to the push service")
        }
        return TransportError(.protocolError, "the HTTP/1.1 exchange failed (\(type(of: error)))")
    }

    /// Closes the pool's connections; sends after it fail with `shutDown`.
    public func shutdown() async {
        do {
            try await http.shutdown()
        } catch {
            logger.debug("Web Push HTTP/1.1 client shut down with an error", metadata: ["kind": "\(type(of: error))"])
        }
    }
}
