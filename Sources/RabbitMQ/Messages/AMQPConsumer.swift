/// The deliveries of one consumer, as an `AsyncSequence`.
///
/// Iteration ends after ``cancel()`` (once the deliveries already received are handed out), when the
/// connection is closed with `close()`, or when the iterating task is cancelled; it throws an ``AMQPError``
/// when the channel or connection is lost or the broker cancels the consumer. Every delivery must be
/// settled with ``ack(_:multiple:)``, ``nack(_:requeue:)`` or ``reject(_:requeue:)``; releasing the
/// consumer closes its channel and the broker requeues whatever was not settled.
///
/// With ``AMQPConfiguration/reconnect`` set, a lost connection does not end iteration: the consumer is opened
/// again on the new connection (same queue, prefetch and requested tag) after the on-connect hook, and the same
/// iterator goes on. Deliveries of the old connection that were not settled come back from the broker (with
/// `redelivered` set); settling one of them is a no-op, and those not yet handed out are dropped.
public final class AMQPConsumer: AsyncSequence, Sendable {
    public typealias Element = AMQPDelivery
    public typealias Failure = AMQPError

    /// The queue being consumed.
    public let queue: String
    /// The consumer tag (the broker's choice if none was given), as first started; a reconnect may change it.
    public let consumerTag: String
    let connection: AMQPConnection
    let buffer: DeliveryBuffer
    /// Whether plain acks go to the connection thread without waking it (`UnsettledDeliveries.acksMayWait`).
    let acksMayWait: Bool

    init(
        connection: AMQPConnection, queue: String, started: ConsumerStarted, buffer: DeliveryBuffer,
        acksMayWait: Bool
    ) {
        self.connection = connection
        self.queue = queue
        self.consumerTag = started.consumerTag
        self.buffer = buffer
        self.acksMayWait = acksMayWait
    }

    deinit {
        _ = connection.mailbox.submit(.releaseConsumer(buffer))
    }

    /// Iterates the deliveries; the iterator keeps the consumer alive.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = AMQPDelivery
        public typealias Failure = AMQPError

        let consumer: AMQPConsumer
        var isDone = false

        /// The next delivery; `nil` once iteration has ended.
        nonisolated(nonsending) public mutating func next() async throws(AMQPError) -> AMQPDelivery? {
            guard !isDone else { return nil }
            return try take(await consumer.buffer.next())
        }

        /// The next delivery, without leaving the caller's actor; `nil` once iteration has ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(AMQPError) -> AMQPDelivery? {
            guard !isDone else { return nil }
            return try take(await consumer.buffer.next())
        }

        private mutating func take(_ result: Result<AMQPDelivery?, AMQPError>) throws(AMQPError) -> AMQPDelivery? {
            switch result {
            case .success(let delivery?):
                return delivery
            case .success(nil):
                isDone = true
                return nil
            case .failure(let error):
                isDone = true
                throw error
            }
        }
    }

    /// An iterator over the deliveries; iterators share one stream, each delivery goes to one of them.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: self)
    }

    /// Acknowledges `delivery` (and, with `multiple`, every earlier one on this consumer).
    ///
    /// basic.ack has no reply in AMQP 0-9-1, so this returns as soon as the connection thread has it queued.
    /// For a delivery of a connection that was lost since, it does nothing: the broker delivers it again.
    ///
    /// The connection thread sends the plain acks it takes in one turn together, as one `multiple` ack for the run
    /// of this consumer's oldest deliveries they settle, and single acks for the rest: a delivery nobody settled
    /// is never acknowledged on the way.
    nonisolated(nonsending) public func ack(_ delivery: AMQPDelivery, multiple: Bool = false) async throws(AMQPError) {
        try settle(delivery, .ack(multiple: multiple))
    }

    /// Acknowledges `deliveries`, all in one turn of the connection thread: when they are the consumer's oldest
    /// unsettled deliveries (a group finished together), that is one `multiple` ack frame for all of them.
    /// Acking them one by one instead lets the thread wake between them and send a frame for every few.
    nonisolated(nonsending) public func ack(_ deliveries: some Collection<AMQPDelivery>) async throws(AMQPError) {
        guard !deliveries.isEmpty else { return }
        var settlements: [Command] = []
        settlements.reserveCapacity(deliveries.count)
        for delivery in deliveries { settlements.append(try settlement(delivery, .ack(multiple: false))) }
        if let error = connection.mailbox.submit(contentsOf: settlements, announce: !acksMayWait) { throw error }
    }

    /// Negatively acknowledges `delivery`; with `requeue` the broker delivers it again (`redelivered` set),
    /// otherwise it is dropped or dead-lettered.
    nonisolated(nonsending) public func nack(_ delivery: AMQPDelivery, requeue: Bool) async throws(AMQPError) {
        try settle(delivery, .nack(multiple: false, requeue: requeue))
    }

    /// Rejects `delivery` (basic.reject); with `requeue` the broker delivers it again.
    nonisolated(nonsending) public func reject(_ delivery: AMQPDelivery, requeue: Bool) async throws(AMQPError) {
        try settle(delivery, .reject(requeue: requeue))
    }

    /// Stops deliveries (basic.cancel) and waits for the broker's cancel-ok. Deliveries already received
    /// are still handed out by the iterator and can still be settled.
    nonisolated(nonsending) public func cancel() async throws(AMQPError) {
        try await connection.perform { .cancelConsumer(buffer, $0) }
    }

    private func settle(_ delivery: AMQPDelivery, _ kind: Settlement.Kind) throws(AMQPError) {
        // A plain ack of a consumer with a large prefetch waits for the thread's next turn
        // (`Mailbox.submit(contentsOf:announce:)`); anything else is sent at once.
        var waits = false
        if case .ack(multiple: false) = kind { waits = acksMayWait }
        if let error = connection.mailbox.submit(try settlement(delivery, kind), announce: !waits) { throw error }
    }

    /// The command that settles `delivery`, if it is this consumer's and the consumer has not failed.
    private func settlement(_ delivery: AMQPDelivery, _ kind: Settlement.Kind) throws(AMQPError) -> Command {
        guard delivery.consumerID == buffer.id else {
            throw AMQPError(.protocolError, "the delivery belongs to another consumer")
        }
        if let failure = buffer.failure { throw failure }
        return .settle(
            Settlement(
                buffer: buffer, channel: delivery.channel, generation: delivery.generation,
                deliveryTag: delivery.deliveryTag, kind: kind))
    }
}
