extension AMQPConnection {
    /// Publishes a message and returns once the broker has confirmed it (publisher confirms).
    ///
    /// Pipelined: concurrent calls from many tasks are all outstanding at once, written by the connection
    /// thread in batches and matched to basic.ack (including `multiple`) by delivery tag. Cancelling the
    /// calling task does not recall a message that is already queued; the call still waits for its confirm.
    ///
    /// - Throws: ``AMQPError/Code/publishNacked`` on basic.nack; ``AMQPError/Code/messageReturned`` when
    ///   `mandatory` is set and the broker could not route the message; ``AMQPError/Code/channelClosed``
    ///   when the broker closed the publishing channel (an unknown exchange, say: reply code 404) — the next
    ///   publish opens a new one; ``AMQPError/Code/connectionClosed`` or ``AMQPError/Code/closed`` when the
    ///   connection ends before the confirm arrives.
    nonisolated(nonsending) public func publish(
        _ body: [UInt8],
        exchange: String = "",
        routingKey: String,
        properties: AMQPProperties = .init(),
        mandatory: Bool = false
    ) async throws(AMQPError) {
        try await perform { continuation in
            .publish(
                PublishRequest(
                    body: body, exchange: exchange, routingKey: routingKey, properties: properties,
                    mandatory: mandatory, continuation: continuation))
        }
    }
}
