/// Takes messages from one queue one at a time with basic.get, unacknowledged, on a channel of its own: for tools
/// that look through a queue (an operator listing parked messages) rather than consume it.
///
/// A message taken stays unacknowledged, so it is not handed out again (to this reader or anyone else) until it is
/// settled with ``ack(_:)`` or ``nack(_:requeue:)`` or the reader is closed, when the broker requeues every message
/// it did not settle. So a reader that holds what it does not want and takes until ``get()`` returns nil has looked
/// at every message that was ready, once each. What it holds is bounded by the caller, not by a prefetch.
///
/// The reader's channel is not re-opened after a reconnect: once the connection is lost, `get()` throws and the
/// messages it held are back in the queue.
public final class AMQPQueueReader: Sendable {
    /// The queue read.
    public let queue: String
    let connection: AMQPConnection
    let buffer: DeliveryBuffer

    init(connection: AMQPConnection, queue: String, buffer: DeliveryBuffer) {
        self.connection = connection
        self.queue = queue
        self.buffer = buffer
    }

    deinit {
        _ = connection.mailbox.submit(.releaseConsumer(buffer))
    }

    /// Takes the next ready message (basic.get), unacknowledged; nil when the queue has no ready message.
    nonisolated(nonsending) public func get() async throws(AMQPError) -> AMQPDelivery? {
        try await connection.perform { .get(buffer, $0) }
    }

    /// Acknowledges `delivery`: the broker drops it.
    nonisolated(nonsending) public func ack(_ delivery: AMQPDelivery) async throws(AMQPError) {
        try settle(delivery, .ack(multiple: false))
    }

    /// Negatively acknowledges `delivery`; with `requeue` it goes back to the queue, otherwise it is dropped (or
    /// dead-lettered).
    nonisolated(nonsending) public func nack(_ delivery: AMQPDelivery, requeue: Bool) async throws(AMQPError) {
        try settle(delivery, .nack(multiple: false, requeue: requeue))
    }

    /// Closes the reader's channel and returns once the broker confirmed it: by then every message the reader took
    /// and did not settle is back in the queue. Settlements made before it reach the broker first. Idempotent.
    nonisolated(nonsending) public func close() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            if connection.mailbox.submit(.closeReader(buffer, continuation)) != nil { continuation.resume() }
        }
    }

    private func settle(_ delivery: AMQPDelivery, _ kind: Settlement.Kind) throws(AMQPError) {
        guard delivery.consumerID == buffer.id else {
            throw AMQPError(.protocolError, "the delivery was taken by another reader or consumer")
        }
        if let failure = buffer.failure { throw failure }
        let settlement = Settlement(
            buffer: buffer, channel: delivery.channel, generation: delivery.generation,
            deliveryTag: delivery.deliveryTag, kind: kind)
        if let error = connection.mailbox.submit(.settle(settlement)) { throw error }
    }
}

extension AMQPConnection {
    /// Opens a reader of `queue` on a channel of its own (see ``AMQPQueueReader``). The queue is not declared: a
    /// missing one fails the first `get()` with ``AMQPError/Code/channelClosed`` and reply code 404.
    nonisolated(nonsending) public func reader(of queue: String) async throws(AMQPError) -> AMQPQueueReader {
        let buffer = DeliveryBuffer()
        _ = try await perform { .openReader(ReaderStart(queue: queue, buffer: buffer, continuation: $0)) }
        return AMQPQueueReader(connection: self, queue: queue, buffer: buffer)
    }
}
