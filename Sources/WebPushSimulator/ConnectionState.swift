import NIOCore

/// What one TCP connection to the simulator has seen: the requests completed, for
/// ``WebPushSimulatorConfiguration/dropConnectionAfterRequests``.
///
/// Confined to the connection's event loop (its HTTP/2 stream channels share it), so it needs no lock; handlers reach
/// it through a `NIOLoopBound`.
final class ConnectionState {
    /// What to do with a request that just completed.
    enum RequestAction {
        case answer
        /// Close the connection abruptly without answering.
        case drop
    }

    private let channel: any Channel
    private let dropAfter: Int?
    private var completedRequests = 0
    /// Set by ``AbruptCloseHandler`` once it is in the pipeline: its context closes the socket below TLS.
    var abruptCloser: ChannelHandlerContext?

    init(channel: any Channel, dropAfter: Int?) {
        self.channel = channel
        self.dropAfter = dropAfter
    }

    /// A request is complete: answer it, or (past the limit) drop the connection.
    func requestCompleted() -> RequestAction {
        completedRequests += 1
        guard let dropAfter, completedRequests > dropAfter else { return .answer }
        if let abruptCloser {
            abruptCloser.close(promise: nil)
        } else {
            channel.close(promise: nil)
        }
        return .drop
    }
}

/// The first handler in a connection's pipeline, below TLS: closing through its context reaches the socket directly
/// (no close_notify, no GOAWAY), which is how a dropped connection is cut.
final class AbruptCloseHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let connection: ConnectionState

    init(connection: ConnectionState) {
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.abruptCloser = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.abruptCloser = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Breaks the cycle connection → context → pipeline → handler → connection.
        connection.abruptCloser = nil
        context.fireChannelInactive()
    }
}
