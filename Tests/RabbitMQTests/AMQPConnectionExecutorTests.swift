import Foundation
import HeraldTestSupport
import RabbitMQ
import Testing

/// `AMQPConnection.executor` against the real broker: a consumer that iterates there runs on the connection's own
/// thread, gets and settles every delivery, and a task that prefers the executor goes on after the connection ends.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(1))) struct AMQPConnectionExecutorTests {
    /// The name of the thread running the caller (`herald-amqp` for a connection's thread).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aConsumerOnTheExecutorTakesEveryDeliveryOnTheConnectionThreadAndAcksIt() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        // More than the prefetch, and not a whole number of the consumer's ack batches.
        let count = 2990
        try await connection.publishNumbered(count, to: queue)
        let (bodies, threads) = try await withTaskExecutorPreference(connection.executor) {
            let consumer = try await connection.consume(queue: queue, prefetch: 1000)
            var bodies: [UInt8] = []
            var threads: Set<String> = []
            for try await delivery in consumer {
                threads.insert(Self.threadName())
                bodies.append(contentsOf: delivery.body)
                try await consumer.ack(delivery)
                if bodies.count == count { break }
            }
            try await consumer.cancel()
            return (bodies, threads)
        }
        #expect(bodies == (0..<count).map { UInt8(truncatingIfNeeded: $0) })
        #expect(threads == ["herald-amqp"])
        // Every ack reached the broker: once the connection is closed, nothing comes back to the queue.
        await connection.close()
        let check = try await Broker.connect()
        #expect(try await check.queueMessageCount(queue) == 0)
        try await check.deleteQueue(queue)
        await check.close()
    }

    @Test func aTaskOnTheExecutorGoesOnElsewhereOnceTheConnectionEnds() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        try await connection.publish([1], routingKey: queue)
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        let (received, receive) = AsyncStream.makeStream(of: String.self)
        let iterating = Task {
            try await withTaskExecutorPreference(connection.executor) {
                for try await _ in consumer { receive.yield(Self.threadName()) }
                // Iteration ended as the connection did (the thread resumed the consumer as it finished); the next
                // step needs the executor again, after its thread has gone.
                await Task.yield()
                return Self.threadName()
            }
        }
        var names = received.makeAsyncIterator()
        // The delivery was taken on the connection's thread; then the connection closes under the iterating task.
        #expect(await names.next() == "herald-amqp")
        await connection.close()
        #expect(try await iterating.value != "herald-amqp")
        // A task that asks for the executor of a closed connection still runs, past a suspension.
        let late = await withTaskExecutorPreference(connection.executor) {
            await Task.yield()
            return Self.threadName()
        }
        #expect(late != "herald-amqp")
    }
}
