import APNSCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Handles one HTTP/2 stream: gathers the request's HEADERS and DATA, asks the simulator for the answer once
/// END_STREAM arrives, and writes it (after the configured delay).
final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let simulator: APNSSimulator
    private let connection: ConnectionState
    private var headers: [(name: String, value: String)] = []
    private var body: ByteBuffer?
    /// Bytes received; only the first `bodyLimit` are kept, which is enough to decide 413.
    private var bodySize = 0
    private let bodyLimit = 64 * 1024
    private var opened = false
    private var requestComplete = false
    /// Whether this stream is counted in the connection's pending answers.
    private var pending = false
    /// Whether the answer is being written.
    private var answering = false

    init(simulator: APNSSimulator, connection: ConnectionState) {
        self.simulator = simulator
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !requestComplete else { return }
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if !opened {
                opened = true
                pending = true
                if let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
                    connection.streamOpened(streamID)
                }
            }
            // Trailers are not part of an APNs request; their fields are ignored.
            if headers.isEmpty { headers = frame.headers.map { ($0.name, $0.value) } }
            if frame.endStream { requestEnded(context: context) }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data {
                bodySize += buffer.readableBytes
                if (body?.readableBytes ?? 0) < bodyLimit {
                    if body == nil { body = context.channel.allocator.buffer(capacity: buffer.readableBytes) }
                    body!.writeBuffer(&buffer)
                }
            }
            if frame.endStream { requestEnded(context: context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Writing END_STREAM closes the stream channel before the bytes reach the socket; an answer in flight
        // finishes in its write callback instead, so that a GOAWAY-triggered close cannot discard it.
        if !answering { finishPending() }
        context.fireChannelInactive()
    }

    private func requestEnded(context: ChannelHandlerContext) {
        requestComplete = true
        guard connection.requestCompleted() == .answer else { return }
        if simulator.refusesStream(headers: headers) {
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            finishPending()
            return
        }
        let payload = body.map { Array($0.readableBytesView) } ?? []
        guard let answer = simulator.answer(headers: headers, payload: payload, payloadSize: bodySize, on: connection)
        else {
            finishPending()  // silent: never answered
            return
        }
        if let delay = simulator.responseDelay {
            let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                self.write(answer, context: loopBoundContext.value)
            }
        } else {
            write(answer, context: context)
        }
    }

    private func write(_ answer: Answer, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }  // reset by the client while the answer was delayed
        answering = true
        var fields: [(String, String)] = [(":status", String(answer.status))]
        fields += answer.headers.map { ($0.name, $0.value) }
        let last: HTTP2Frame.FramePayload
        if let body = answer.body {
            fields.append(("content-type", "application/json"))
            let headers = HTTP2Frame.FramePayload.Headers(headers: HPACKHeaders(fields))
            context.write(wrapOutboundOut(.headers(headers)), promise: nil)
            last = .data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true))
        } else {
            last = .headers(.init(headers: HPACKHeaders(fields), endStream: true))
        }
        // The stream stops counting as pending only once its answer is written, so that a GOAWAY-triggered close
        // never overtakes it.
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(last)).whenComplete { _ in loopBoundSelf.value.finishPending() }
    }

    private func finishPending() {
        guard pending else { return }
        pending = false
        connection.streamFinished()
    }
}

/// The response to one request.
struct Answer: Sendable {
    var status: Int
    /// Response headers after `:status`: `apns-id` and `apns-unique-id` on the device route, `apns-request-id` (and
    /// `apns-channel-id`, `apns-unique-id`) on the broadcast endpoints.
    var headers: [(name: String, value: String)]
    /// The JSON body (a rejection's, or a channel read or list); nil for none.
    var body: String?

    /// An answer of the device route.
    init(status: Int, apnsID: String, uniqueID: String, body: String?) {
        self.init(status: status, headers: [("apns-id", apnsID), ("apns-unique-id", uniqueID)], body: body)
    }

    init(status: Int, headers: [(name: String, value: String)], body: String?) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
