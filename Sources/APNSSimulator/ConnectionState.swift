import NIOCore
import NIOHTTP2

/// What one TCP connection to the simulator has seen: requests, the provider token in use and the fault schedule.
///
/// Confined to the connection's event loop (its stream channels share it), so it needs no lock; stream handlers reach
/// it through a `NIOLoopBound`.
final class ConnectionState {
    /// What to do with a request whose END_STREAM just arrived.
    enum RequestAction {
        /// Validate and answer.
        case answer
        /// Close the connection abruptly without answering.
        case drop
    }

    /// What the token-update rule and team binding say about a verified token.
    enum TokenAction: Equatable {
        /// Accept; `firstAuthentication` when this is the connection's first valid token.
        case accept(firstAuthentication: Bool)
        case reject(Rejection)
    }

    private let channel: Channel
    private let goAwayAfterStreams: Int?
    private let dropConnectionAfterStreams: Int?
    private let minimumTokenUpdateInterval: Int64?

    /// Set by ``AbruptCloseHandler`` once it is in the pipeline: its context closes the socket below TLS.
    var abruptCloser: ChannelHandlerContext?
    private var completedRequests = 0
    private var highestStreamID = HTTP2StreamID(0)
    /// Streams that have started and will still be answered.
    private var pendingAnswers = 0
    private var goAwaySent = false
    private var currentToken: String?
    private var currentTokenSince: Int64 = 0
    private var teamID: String?

    init(channel: Channel, configuration: APNSSimulatorConfiguration) {
        self.channel = channel
        self.goAwayAfterStreams = configuration.goAwayAfterStreams
        self.dropConnectionAfterStreams = configuration.dropConnectionAfterStreams
        self.minimumTokenUpdateInterval = configuration.minimumTokenUpdateInterval
    }

    /// A stream's first HEADERS arrived.
    func streamOpened(_ streamID: HTTP2StreamID) {
        highestStreamID = max(highestStreamID, streamID)
        pendingAnswers += 1
    }

    /// A stream's request is complete: decides between answering and dropping, and sends GOAWAY when due.
    func requestCompleted() -> RequestAction {
        completedRequests += 1
        if let limit = dropConnectionAfterStreams, completedRequests > limit {
            dropConnection()
            return .drop
        }
        if let limit = goAwayAfterStreams, completedRequests >= limit, !goAwaySent {
            goAwaySent = true
            // Every stream up to the highest one seen is still answered; NIO ignores any the client opens later.
            let frame = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(
                    lastStreamID: highestStreamID,
                    errorCode: .noError,
                    opaqueData: ByteBuffer(string: #"{"reason":"Shutdown"}"#)
                )
            )
            channel.writeAndFlush(frame, promise: nil)
        }
        return .answer
    }

    /// A stream that was counted as pending will not be answered after all (silent, reset, or answered).
    func streamFinished() {
        pendingAnswers -= 1
        if goAwaySent, pendingAnswers <= 0 { channel.close(promise: nil) }
    }

    /// Checks the team binding and the 20-minute token update rule for a verified token.
    func useToken(_ token: String, teamID: String, now: Int64) -> TokenAction {
        if let bound = self.teamID, bound != teamID {
            // "APNs doesn't support authentication tokens from multiple developer accounts over a single connection."
            return .reject(Rejection(403, .unrelatedKeyIdInToken))
        }
        let first = self.teamID == nil
        if let current = currentToken, current != token {
            if let interval = minimumTokenUpdateInterval, now - currentTokenSince < interval {
                return .reject(Rejection(429, .tooManyProviderTokenUpdates))
            }
        }
        if currentToken != token {
            currentToken = token
            currentTokenSince = now
        }
        self.teamID = teamID
        return .accept(firstAuthentication: first)
    }

    /// Raises the advertised stream limit (after the first valid provider token).
    func advertise(maxConcurrentStreams: Int) {
        let settings: HTTP2Settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)]
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))), promise: nil)
    }

    /// Closes the TCP connection below TLS: no GOAWAY, no close_notify, nothing flushed.
    func dropConnection() {
        if let abruptCloser {
            abruptCloser.close(promise: nil)
        } else {
            channel.close(promise: nil)
        }
    }
}

/// The first handler in a connection's pipeline, below TLS: closing through its context reaches the socket
/// directly, which is how ``ConnectionState/dropConnection()`` cuts a connection abruptly.
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
        // Breaks the reference cycle connection → context → pipeline → handler → connection.
        connection.abruptCloser = nil
        context.fireChannelInactive()
    }
}
