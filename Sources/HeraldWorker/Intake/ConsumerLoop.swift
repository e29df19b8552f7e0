import HeraldCore
import Logging
import RabbitMQ
import ServiceLifecycle

/// A queue's deliveries as they arrive, until it is cancelled: an `AMQPConsumer`, or a fake in tests.
protocol DeliveryStream: AsyncSequence<AMQPDelivery, AMQPError>, Sendable {
    /// Asks the broker to stop delivering: the sequence ends once the deliveries already sent are handed over.
    func cancel() async throws(AMQPError)
}

extension AMQPConsumer: DeliveryStream {}

/// Consumes a queue with bounded concurrency (prefetch bounds what the broker hands over, so the task group is
/// bounded too) until graceful shutdown: then it cancels the consumer, lets the deliveries in hand finish and
/// returns.
///
/// `accept` sees each delivery on the loop's own task, in the order the broker sent them, and returns the work
/// that is to run in a task of its own, if any. Work that takes no waiting (decoding, queueing a small job) thus
/// costs no task, and small jobs reach their queue in delivery order, so that a finished group's acks coalesce
/// into one `multiple` ack.
///
/// `executor`, if given, is where the work runs (see `DispatchTaskExecutor`), and the loop too unless it runs on the
/// connection's thread: with `onConnectionThread`, the loop and `accept` run there (`AMQPConnectionExecutor`), taking
/// each turn's deliveries without a wake-up of another thread, and the work goes to `executor` or the event loops
/// (`EventLoopTaskExecutor`).
enum ConsumerLoop {
    typealias Work = @Sendable () async -> Void

    static func run(
        queue: String,
        prefetch: UInt16,
        on connection: AMQPConnection,
        logger: Logger,
        maximumBodySize: Int = .max,
        executor: (any TaskExecutor)? = nil,
        onConnectionThread: Bool = false,
        accept: @escaping @Sendable (AMQPDelivery, AMQPConsumer) -> Work?
    ) async throws {
        let consumer = try await connection.consume(queue: queue, prefetch: prefetch, maximumBodySize: maximumBodySize)
        logger.info("consuming", metadata: ["queue": "\(queue)"])
        try await run(
            consumer, loopExecutor: onConnectionThread ? connection.executor : nil, executor: executor, accept: accept)
        logger.info("consumer stopped", metadata: ["queue": "\(queue)"])
    }

    /// Runs `consumer` to its end: on graceful shutdown it is cancelled, and this returns once every piece of work
    /// started for a delivery has finished (the drain).
    ///
    /// - Parameters:
    ///   - loopExecutor: where the loop and `accept` run, if not on `executor`.
    ///   - executor: where the work runs (and the loop, without `loopExecutor`); nil: the global executor, or the
    ///     event loops with a `loopExecutor`.
    static func run<Consumer: DeliveryStream>(
        _ consumer: Consumer,
        loopExecutor: (any TaskExecutor)? = nil,
        executor: (any TaskExecutor)? = nil,
        accept: @escaping @Sendable (AMQPDelivery, Consumer) -> Work?
    ) async throws {
        // Tasks inherit the loop's preference unless given another: with a loop executor of its own, the work goes
        // to `executor` or the event loops, never left on the loop's. (Not `globalConcurrentExecutor`: on Linux that
        // is Dispatch's pool, which the global executor hook that puts tasks on the event loops does not reach.)
        let workExecutor: (any TaskExecutor)? =
            loopExecutor == nil ? nil : (executor ?? EventLoopTaskExecutor.shared)
        try await withGracefulShutdownHandler {
            // Unstructured tasks that ask for `ExecutorPreference.current` run on `executor` too.
            try await ExecutorPreference.with(executor) {
                try await withTaskExecutorPreference(loopExecutor) {
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await delivery in consumer {
                            if let work = accept(delivery, consumer) {
                                group.addTask(executorPreference: workExecutor) { await work() }
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            Task { try? await consumer.cancel() }
        }
    }
}
