/// One AMQP channel as the connection thread sees it. Thread-confined.
final class ChannelState {
    enum Role {
        /// Queue declarations, deletions, purges and passive declares; reopened after the broker closes it.
        case control
        /// Publishing in confirm mode; reopened (tags restart at 1) after the broker closes it.
        case publisher
        /// One consumer; its end is the consumer's end.
        case consumer(ConsumerState)
    }

    let id: UInt16
    let role: Role
    /// True once the client sent channel.close: nothing more is sent or delivered on it.
    var isClosing = false
    /// The RPC whose reply is awaited; AMQP allows one synchronous request per channel at a time.
    var inFlight: RPCCall?
    /// RPCs waiting for `inFlight` to be answered.
    var queued = RingBuffer<RPCCall>()
    /// A delivery or return whose header and body frames are still arriving.
    var content: IncomingContent?

    init(id: UInt16, role: Role) {
        self.id = id
        self.role = role
    }
}

/// A synchronous request queued on a channel, with what to do with its reply.
struct RPCCall {
    let request: RPCRequest
    let completion: (ConnectionLoop, Result<RPCReply, AMQPError>) -> Void
}

/// The connection thread's view of one consumer.
final class ConsumerState {
    let buffer: DeliveryBuffer
    let queue: String
    let prefetch: UInt16
    /// The largest body kept: a larger one is read and dropped frame by frame, and delivered without it.
    let maximumBodySize: Int
    /// The tag the caller asked for (empty: the broker chooses); asked for again after a reconnect.
    let requestedTag: String
    var consumerTag: String
    var isCancelled = false
    /// True once basic.consume-ok arrived: from then on a lost connection re-opens the consumer.
    var isStarted = false
    /// Deliveries completed in this loop turn, handed to `buffer` together at the end of the turn.
    var outbox: [AMQPDelivery] = []
    /// What the broker counts as unacknowledged on the consumer's channel, and the acks of this turn.
    var unsettled: UnsettledDeliveries

    init(
        buffer: DeliveryBuffer, queue: String, prefetch: UInt16, consumerTag: String, maximumBodySize: Int = .max
    ) {
        self.buffer = buffer
        self.queue = queue
        self.prefetch = prefetch
        self.unsettled = UnsettledDeliveries(prefetch: prefetch)
        self.maximumBodySize = maximumBodySize
        self.requestedTag = consumerTag
        self.consumerTag = consumerTag
    }
}

/// Content (a delivery or a returned message) being assembled from its method, header and body frames.
struct IncomingContent {
    enum Kind {
        case delivery(deliveryTag: UInt64, redelivered: Bool)
        case returned(replyCode: UInt16, replyText: String)
        /// The message of a basic.get-ok, which completes the channel's in-flight basic.get.
        case got(deliveryTag: UInt64, redelivered: Bool)
    }

    let kind: Kind
    let exchange: String
    let routingKey: String
    var properties = AMQPProperties(persistent: false)
    /// -1 until the header frame has arrived.
    var bodySize = -1
    var body: [UInt8] = []
    /// Bytes of body frames received so far.
    var received = 0
    /// True when the body is over the consumer's limit: its frames are counted and dropped.
    var discarding = false
}
