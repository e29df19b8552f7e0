extension AMQPConnection {
    /// Declares a queue (queue.declare) and returns its current message and consumer counts.
    ///
    /// Declaring an existing queue with different settings fails with ``AMQPError/Code/channelClosed``
    /// and reply code 406.
    nonisolated(nonsending) public func declareQueue(
        _ name: String,
        durable: Bool = true,
        exclusive: Bool = false,
        autoDelete: Bool = false,
        arguments: AMQPTable = [:]
    ) async throws(AMQPError) -> (messageCount: UInt32, consumerCount: UInt32) {
        let declaration = QueueDeclaration(
            name: name, passive: false, durable: durable, exclusive: exclusive, autoDelete: autoDelete,
            arguments: arguments)
        let reply = try await perform { .queueOperation(.queueDeclare(declaration), $0) }
        guard case .queueDeclared(let messageCount, let consumerCount) = reply else { return (0, 0) }
        return (messageCount, consumerCount)
    }

    /// The number of ready messages in an existing queue (a passive declare).
    ///
    /// A missing queue fails with ``AMQPError/Code/channelClosed`` and reply code 404.
    nonisolated(nonsending) public func queueMessageCount(_ name: String) async throws(AMQPError) -> UInt32 {
        let declaration = QueueDeclaration(
            name: name, passive: true, durable: false, exclusive: false, autoDelete: false, arguments: [:])
        let reply = try await perform { .queueOperation(.queueDeclare(declaration), $0) }
        guard case .queueDeclared(let messageCount, _) = reply else { return 0 }
        return messageCount
    }

    /// Deletes a queue and the messages in it; deleting a missing queue succeeds.
    nonisolated(nonsending) public func deleteQueue(_ name: String) async throws(AMQPError) {
        _ = try await perform { .queueOperation(.queueDelete(name), $0) }
    }

    /// Removes every ready message from a queue.
    nonisolated(nonsending) public func purgeQueue(_ name: String) async throws(AMQPError) {
        _ = try await perform { .queueOperation(.queuePurge(name), $0) }
    }

    /// Declares an exchange (exchange.declare), e.g. `topic`. Declaring an existing exchange of another type fails
    /// with ``AMQPError/Code/channelClosed`` and reply code 406.
    nonisolated(nonsending) public func declareExchange(
        _ name: String, type: String, durable: Bool = true
    ) async throws(AMQPError) {
        _ = try await perform {
            .queueOperation(.exchangeDeclare(name: name, type: type, durable: durable, passive: false), $0)
        }
    }

    /// Checks that an exchange exists without creating it (a passive exchange.declare).
    ///
    /// A missing exchange fails with ``AMQPError/Code/channelClosed`` and reply code 404. The broker does not
    /// compare the type of a passive declare: to check it, declare the exchange as it should be once it is known
    /// to exist (406 if it differs).
    nonisolated(nonsending) public func checkExchange(_ name: String) async throws(AMQPError) {
        _ = try await perform {
            .queueOperation(.exchangeDeclare(name: name, type: "", durable: false, passive: true), $0)
        }
    }

    /// Deletes an exchange and its bindings; deleting a missing exchange succeeds.
    nonisolated(nonsending) public func deleteExchange(_ name: String) async throws(AMQPError) {
        _ = try await perform { .queueOperation(.exchangeDelete(name), $0) }
    }

    /// Binds a queue to an exchange with a routing key (queue.bind); a topic exchange's key may hold `*` and `#`.
    nonisolated(nonsending) public func bindQueue(
        _ queue: String, to exchange: String, routingKey: String
    ) async throws(AMQPError) {
        _ = try await perform {
            .queueOperation(.queueBind(queue: queue, exchange: exchange, routingKey: routingKey), $0)
        }
    }
}
