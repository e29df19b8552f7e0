import HeraldCore
import Logging
import RabbitMQ
import ServiceLifecycle

/// Consumes a queue with bounded concurrency (prefetch bounds what the broker hands over, so the task group is
/// bounded too) until graceful shutdown: then it cancels the consumer, lets the deliveries in hand finish and
/// returns.
///
/// `accept` sees each delivery on the loop's own task, in the order the broker sent them, and returns the work
/// that is to run in a task of its own, if any. Work that takes no waiting (decoding, queueing a small job) thus
/// costs no task, and small jobs reach their queue in delivery order, so that a finished group's acks coalesce
/// into one `multiple` ack.
///
/// `executor`, if given, is where the loop and its tasks run (see `DispatchTaskExecutor`).
enum ConsumerLoop {
    typealias Work = @Sendable () async -> Void

    static func run(
        queue: String,
        prefetch: UInt16,
        on connection: AMQPConnection,
        logger: Logger,
        executor: (any TaskExecutor)? = nil,
        accept: @escaping @Sendable (AMQPDelivery, AMQPConsumer) -> Work?
    ) async throws {
        let consumer = try await connection.consume(queue: queue, prefetch: prefetch)
        logger.info("consuming", metadata: ["queue": "\(queue)"])
        try await withGracefulShutdownHandler {
            // The loop and every task it starts (task groups inherit the preference, unstructured tasks that ask for
            // it get it too) run on `executor`, if given.
            try await ExecutorPreference.with(executor) {
                try await withThrowingDiscardingTaskGroup { group in
                    for try await delivery in consumer {
                        if let work = accept(delivery, consumer) { group.addTask { await work() } }
                    }
                }
            }
        } onGracefulShutdown: {
            Task { try? await consumer.cancel() }
        }
        logger.info("consumer stopped", metadata: ["queue": "\(queue)"])
    }
}
