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
}
