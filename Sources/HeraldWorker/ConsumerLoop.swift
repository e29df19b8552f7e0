import Logging
import RabbitMQ
import ServiceLifecycle

/// Consumes a queue with bounded concurrency (prefetch bounds what the broker hands over, so the task group is
/// bounded too) until graceful shutdown: then it cancels the consumer, lets the deliveries in hand finish and
/// returns.
enum ConsumerLoop {
    static func run(
        queue: String,
        prefetch: UInt16,
        on connection: AMQPConnection,
        logger: Logger,
        handle: @escaping @Sendable (AMQPDelivery, AMQPConsumer) async -> Void
    ) async throws {
        let consumer = try await connection.consume(queue: queue, prefetch: prefetch)
        logger.info("consuming", metadata: ["queue": "\(queue)"])
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                for try await delivery in consumer {
                    group.addTask { await handle(delivery, consumer) }
                }
            }
        } onGracefulShutdown: {
            Task { try? await consumer.cancel() }
        }
        logger.info("consumer stopped", metadata: ["queue": "\(queue)"])
    }
}
