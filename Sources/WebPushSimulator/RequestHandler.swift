import NIOCore
import NIOHTTP1

/// Handles the requests of one HTTP/2 stream (behind NIO's HTTP/2-to-HTTP/1 codec) or of one HTTP/1.1 connection, in
/// turn: gathers head and body (keeping at most ``WebPushSimulatorConfiguration/maximumBodySize`` + 1 bytes), asks
/// the simulator for the answer at the end, and writes it after the configured delay.
final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let simulator: WebPushSimulator
    private let connection: ConnectionState
    private let httpVersion: String
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodySize = 0

    init(simulator: WebPushSimulator, connection: ConnectionState, httpVersion: String) {
        self.simulator = simulator
        self.connection = connection
        self.httpVersion = httpVersion
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            bodySize = 0
        case .body(let buffer):
            bodySize += buffer.readableBytes
            let room = simulator.configuration.maximumBodySize + 1 - body.count
            if room > 0 { body += buffer.readableBytesView.prefix(room) }
        case .end:
            guard let head else { return }
            self.head = nil
            requestEnded(head, context: context)
        }
    }

    private func requestEnded(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let request = ReceivedRequest(
            method: head.method, path: head.uri, headers: head.headers, body: body, bodySize: bodySize,
            httpVersion: httpVersion)
        body = []
        guard connection.requestCompleted() == .answer else {
            simulator.dropped(request)
            return
        }
        let answer = simulator.answer(request)
        let keepAlive = head.isKeepAlive
        if let delay = simulator.responseDelay {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                let (handler, context) = loopBound.value
                handler.write(answer, keepAlive: keepAlive, context: context)
            }
        } else {
            write(answer, keepAlive: keepAlive, context: context)
        }
    }

    private func write(_ answer: Answer, keepAlive: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }  // reset or closed while the answer was delayed
        var headers = HTTPHeaders(answer.headers)
        headers.add(name: "content-length", value: String(answer.body.utf8.count))
        let closes = !keepAlive && httpVersion == "HTTP/1.1"
        if closes { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // No empty body part: over HTTP/2 it becomes an empty DATA frame before the END_STREAM one, and
        // AsyncHTTPClient then lost answers to concurrent streams (a 201 has no body).
        if !answer.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: answer.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if closes {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
