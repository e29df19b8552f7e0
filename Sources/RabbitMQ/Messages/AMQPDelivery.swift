/// A message delivered to an ``AMQPConsumer``; settle it with the consumer's `ack`, `nack` or `reject`.
public struct AMQPDelivery: Sendable {
    /// The message body: empty when it was over the consumer's `maximumBodySize` (see `bodySize`).
    public let body: [UInt8]
    /// The body's size as the broker announced it in the content header. Larger than `body.count` only when it was
    /// over the consumer's `maximumBodySize`: the body was then read and dropped frame by frame, never held.
    public let bodySize: Int
    /// The broker's tag for this delivery, unique per consumer channel.
    public let deliveryTag: UInt64
    /// True when the broker delivered this message before and it was not acknowledged.
    public let redelivered: Bool
    /// The exchange the message was published to (empty for the default exchange).
    public let exchange: String
    /// The routing key the message was published with.
    public let routingKey: String
    /// The message properties.
    public let properties: AMQPProperties
    /// The channel the delivery arrived on, so that it is settled on the same one.
    let channel: UInt16
    /// The connection (counted from 1, one more per reconnect) the delivery arrived on: settling a delivery of
    /// an earlier connection is a no-op, since the broker requeued it when that connection ended.
    let generation: UInt64
    /// The ``DeliveryBuffer/id`` of the consumer it was delivered to; 0 for deliveries made by tests.
    let consumerID: UInt64

    /// Creates a delivery, for tests of code that consumes deliveries.
    public init(
        body: [UInt8],
        deliveryTag: UInt64,
        redelivered: Bool = false,
        exchange: String = "",
        routingKey: String,
        properties: AMQPProperties = .init(),
        bodySize: Int? = nil
    ) {
        self.init(
            body: body, bodySize: bodySize ?? body.count, deliveryTag: deliveryTag, redelivered: redelivered,
            exchange: exchange, routingKey: routingKey, properties: properties, channel: 0, generation: 0,
            consumerID: 0)
    }

    init(
        body: [UInt8],
        bodySize: Int,
        deliveryTag: UInt64,
        redelivered: Bool,
        exchange: String,
        routingKey: String,
        properties: AMQPProperties,
        channel: UInt16,
        generation: UInt64,
        consumerID: UInt64
    ) {
        self.body = body
        self.bodySize = bodySize
        self.deliveryTag = deliveryTag
        self.redelivered = redelivered
        self.exchange = exchange
        self.routingKey = routingKey
        self.properties = properties
        self.channel = channel
        self.generation = generation
        self.consumerID = consumerID
    }
}
