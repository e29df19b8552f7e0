extension AMQPConnection {
    /// Starts a consumer on a channel of its own, with `basic.qos` prefetch and manual acknowledgements.
    ///
    /// At most `prefetch` deliveries are unacknowledged at a time, which also bounds what is buffered in
    /// this process. A prefetch of 0 means no limit, and then no bound either.
    /// - Parameters:
    ///   - consumerTag: chosen by the broker when `nil`.
    ///   - maximumBodySize: a message whose content header announces a larger body is delivered without it
    ///     (`AMQPDelivery.bodySize` says how large it was): its body frames are read and dropped one by one, so
    ///     such a message costs no more memory than a frame.
    nonisolated(nonsending) public func consume(
        queue: String, prefetch: UInt16, consumerTag: String? = nil, maximumBodySize: Int = .max
    )
        async throws(AMQPError)
        -> AMQPConsumer
    {
        let buffer = DeliveryBuffer()
        let started = try await perform { continuation in
            .startConsumer(
                ConsumerStart(
                    queue: queue, prefetch: prefetch, consumerTag: consumerTag ?? "",
                    maximumBodySize: maximumBodySize, buffer: buffer, continuation: continuation))
        }
        return AMQPConsumer(
            connection: self, queue: queue, started: started, buffer: buffer,
            acksMayWait: UnsettledDeliveries.acksMayWait(prefetch: prefetch))
    }
}
