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
                    mandatory: mandatory, completion: .single(continuation)))
        }
    }

    /// Publishes `messages` in order to one exchange and routing key, each with its properties, and returns once
    /// the broker has confirmed every one. It costs its caller one wait for all of them, where `publish` costs one
    /// per message; the connection's window of unconfirmed publishes (`maxUnconfirmedPublishes`) still applies.
    ///
    /// - Throws: the first failure if any message failed (the others may have been confirmed): publish them again
    ///   only if the consumers tolerate duplicates (Herald's job ids do).
    nonisolated(nonsending) public func publish(
        contentsOf messages: [(body: [UInt8], properties: AMQPProperties)],
        exchange: String = "",
        routingKey: String,
        mandatory: Bool = false
    ) async throws(AMQPError) {
        guard !messages.isEmpty else { return }
        let result: Result<Void, AMQPError> = await withUnsafeContinuation { continuation in
            let batch = PublishBatch(count: messages.count, continuation: continuation)
            let commands = messages.map { message in
                Command.publish(
                    PublishRequest(
                        body: message.body, exchange: exchange, routingKey: routingKey, properties: message.properties,
                        mandatory: mandatory, completion: .batch(batch)))
            }
            if let error = mailbox.submit(contentsOf: commands) {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
    }
}
