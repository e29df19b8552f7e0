extension AMQPConnection {
    /// Starts a consumer on a channel of its own, with `basic.qos` prefetch and manual acknowledgements.
    ///
    /// At most `prefetch` deliveries are unacknowledged at a time, which also bounds what is buffered in
    /// this process. A prefetch of 0 means no limit, and then no bound either.
    /// - Parameter consumerTag: chosen by the broker when `nil`.
    nonisolated(nonsending) public func consume(queue: String, prefetch: UInt16, consumerTag: String? = nil)
        async throws(AMQPError)
        -> AMQPConsumer
    {
        let buffer = DeliveryBuffer()
        let started = try await perform { continuation in
            .startConsumer(
                ConsumerStart(
                    queue: queue, prefetch: prefetch, consumerTag: consumerTag ?? "", buffer: buffer,
                    continuation: continuation))
        }
        return AMQPConsumer(connection: self, queue: queue, started: started, buffer: buffer)
    }
}
