import HeraldTestSupport
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A deliberately small HTTP/2 client on swift-nio-http2 (not APNSTransport), so the simulator is tested against an
/// independent implementation: TLS trusting the test CA, ALPN h2, one child channel per request, and a record of the
/// connection-level frames (SETTINGS, GOAWAY) the server sends.
struct RawHTTP2Client: Sendable {
    /// One answer.
    struct Response: Sendable {
        var streamID: Int
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// The stream closed (reset, GOAWAY'd or the connection died) without a complete response.
    struct NoResponse: Error {}

    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    let rootFrames: RootFrameRecorder

    static func connect(port: Int, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> RawHTTP2Client
    {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.caCertificatePEM.utf8)))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let recorder = RootFrameRecorder()
        return try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let operations = channel.pipeline.syncOperations
                try operations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: "localhost"))
                let multiplexer = try operations.configureHTTP2Pipeline(
                    mode: .client,
                    connectionConfiguration: .init(),
                    streamConfiguration: .init()
                ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                try operations.addHandler(RootFrameHandler(recorder: recorder))
                return RawHTTP2Client(channel: channel, multiplexer: multiplexer, rootFrames: recorder)
            }
        }
    }

    /// Sends one request and waits for its complete response.
    func send(_ request: TestRequest) async throws -> Response {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ExchangeHandler(request: request, promise: promise))
            }
        }.whenFailure { promise.fail($0) }
        return try await promise.futureResult.get()
    }

    /// Starts a request without waiting for the answer; the returned future completes when it arrives.
    func start(_ request: TestRequest) -> EventLoopFuture<Response> {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ExchangeHandler(request: request, promise: promise))
            }
        }.whenFailure { promise.fail($0) }
        return promise.futureResult
    }

    func close() async {
        try? await channel.close()
    }
}

/// What the test sends: pseudo-headers first, then the rest, in order (repeats allowed, to test DuplicateHeaders).
struct TestRequest: Sendable {
    var headers: [(String, String)]
    var body: [UInt8]
}

/// Writes one request on a fresh stream and collects its response.
private final class ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let request: TestRequest
    private let promise: EventLoopPromise<RawHTTP2Client.Response>
    private var sent = false
    private var status: Int?
    private var headers: [String: String] = [:]
    private var body = ByteBuffer()
    private var completed = false

    init(request: TestRequest, promise: EventLoopPromise<RawHTTP2Client.Response>) {
        self.request = request
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context: context)
        context.fireChannelActive()
    }

    private func sendRequest(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        let headers = HTTP2Frame.FramePayload.Headers(
            headers: HPACKHeaders(request.headers),
            endStream: request.body.isEmpty
        )
        context.write(wrapOutboundOut(.headers(headers)), promise: nil)
        if !request.body.isEmpty {
            let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(bytes: request.body)), endStream: true)
            context.write(wrapOutboundOut(.data(data)), promise: nil)
        }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for header in frame.headers {
                if header.name == ":status" { status = Int(header.value) } else { headers[header.name] = header.value }
            }
            if frame.endStream { complete(context: context) }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data { body.writeBuffer(&buffer) }
            if frame.endStream { complete(context: context) }
        default:
            break
        }
    }

    private func complete(context: ChannelHandlerContext) {
        guard !completed, let status else { return }
        completed = true
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map {
            Int($0)
        }
        promise.succeed(
            RawHTTP2Client.Response(
                streamID: streamID ?? -1,
                status: status,
                headers: headers,
                body: String(buffer: body)
            )
        )
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !completed {
            completed = true
            promise.fail(RawHTTP2Client.NoResponse())
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !completed {
            completed = true
            promise.fail(error)
        }
        context.close(promise: nil)
    }
}

/// Keeps every connection-level frame the server sent and wakes tests waiting for one.
final class RootFrameRecorder: Sendable {
    private struct State {
        var frames: [HTTP2Frame.FramePayload] = []
        var closed = false
        var waiters:
            [(
                predicate: @Sendable (HTTP2Frame.FramePayload) -> Bool,
                continuation: CheckedContinuation<HTTP2Frame.FramePayload?, Never>
            )] = []
    }

    private let state = Mutex(State())

    func append(_ frame: HTTP2Frame.FramePayload) {
        let ready = state.withLock { state in
            state.frames.append(frame)
            let (matching, rest) = (
                state.waiters.filter { $0.predicate(frame) }, state.waiters.filter { !$0.predicate(frame) }
            )
            state.waiters = rest
            return matching.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: frame) }
    }

    func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    /// The first frame (already received or still to come) that matches, or nil if the connection closes first.
    func first(where predicate: @escaping @Sendable (HTTP2Frame.FramePayload) -> Bool) async -> HTTP2Frame.FramePayload?
    {
        await withCheckedContinuation { continuation in
            let resumeNow: HTTP2Frame.FramePayload?? = state.withLock { state in
                if let frame = state.frames.first(where: predicate) { return .some(frame) }
                if state.closed { return .some(nil) }
                state.waiters.append((predicate, continuation))
                return nil
            }
            if let resumeNow { continuation.resume(returning: resumeNow) }
        }
    }

    /// The values of every SETTINGS_MAX_CONCURRENT_STREAMS the server advertised so far, in order.
    var advertisedMaxConcurrentStreams: [Int] {
        state.withLock { state in
            state.frames.compactMap { frame -> Int? in
                guard case .settings(.settings(let settings)) = frame else { return nil }
                return settings.last { $0.parameter == .maxConcurrentStreams }?.value
            }
        }
    }
}

/// Sits after the HTTP/2 handler on the connection channel, where frames for stream 0 arrive.
private final class RootFrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let recorder: RootFrameRecorder

    init(recorder: RootFrameRecorder) {
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        recorder.append(unwrapInboundIn(data).payload)
    }

    func channelInactive(context: ChannelHandlerContext) {
        recorder.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// A frame predicate: SETTINGS (not an ACK) that set SETTINGS_MAX_CONCURRENT_STREAMS.
@Sendable func isMaxConcurrentStreamsSettings(_ frame: HTTP2Frame.FramePayload) -> Bool {
    guard case .settings(.settings(let settings)) = frame else { return false }
    return settings.contains { $0.parameter == .maxConcurrentStreams }
}

/// A frame predicate: GOAWAY.
@Sendable func isGoAway(_ frame: HTTP2Frame.FramePayload) -> Bool {
    if case .goAway = frame { return true }
    return false
}
