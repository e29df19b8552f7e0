import HeraldTestSupport
import NIOPosix
import RabbitMQ
import ServiceLifecycleTestKit
import Testing

@testable import HeraldWorker

/// The drain: on graceful shutdown the consumer is cancelled and the loop returns only once the work of every
/// delivery in hand has finished. No services.
@Suite struct ConsumerLoopTests {
    /// A consumer whose deliveries a test sends; cancelling it ends the sequence after what was sent.
    final class FakeConsumer: DeliveryStream {
        typealias Element = AMQPDelivery
        typealias Failure = AMQPError
        let stream: AsyncThrowingStream<AMQPDelivery, any Error>
        let continuation: AsyncThrowingStream<AMQPDelivery, any Error>.Continuation
        let onCancel: @Sendable () -> Void

        init(onCancel: @escaping @Sendable () -> Void) {
            (stream, continuation) = AsyncThrowingStream.makeStream()
            self.onCancel = onCancel
        }

        func send(_ tag: UInt64) {
            continuation.yield(AMQPDelivery(body: [], deliveryTag: tag, routingKey: "herald.jobs"))
        }

        func cancel() async throws(AMQPError) {
            onCancel()
            continuation.finish()
        }

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<AMQPDelivery, any Error>.AsyncIterator
            mutating func next() async throws(AMQPError) -> AMQPDelivery? {
                do { return try await base.next() } catch { throw AMQPError(.protocolError, "\(error)") }
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }

    enum Event: Sendable, Equatable {
        case started(UInt64)
        case release
        case finished(UInt64)
        case cancelled
        case loopReturned
    }

    @Test func shutdownCancelsTheConsumerAndWaitsForTheWorkInHand() async throws {
        let events = EventCollector<Event>()
        let consumer = FakeConsumer { events.record(.cancelled) }
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup { group in
                group.addTask {
                    try await ConsumerLoop.run(consumer) { delivery, _ in
                        // Tag 0 needs no task; the others wait until the test releases them.
                        guard delivery.deliveryTag != 0 else { return nil }
                        return {
                            events.record(.started(delivery.deliveryTag))
                            _ = await events.wait { $0.contains(.release) }
                            events.record(.finished(delivery.deliveryTag))
                        }
                    }
                    events.record(.loopReturned)
                }
                for tag: UInt64 in [1, 0, 2, 3] { consumer.send(tag) }
                _ = await events.wait { events in (1...3).allSatisfy { events.contains(.started($0)) } }
                trigger.triggerGracefulShutdown()
                _ = await events.wait { $0.contains(.cancelled) }
                // The consumer is cancelled, but the loop has not returned: the work in hand is still out.
                #expect(!events.events.contains(.loopReturned))
                events.record(.release)
                try await group.waitForAll()
            }
        }
        let seen = events.events
        let returned = try #require(seen.firstIndex(of: .loopReturned))
        for tag: UInt64 in 1...3 {
            let finished = try #require(seen.firstIndex(of: .finished(tag)))
            #expect(finished < returned)
        }
        #expect(!seen.contains(.started(0)))
    }

    /// With a loop executor of its own (the AMQP connection's thread in the worker), `accept` runs there and the work
    /// it returns goes to the event loops: a child task would otherwise inherit the loop's executor.
    @Test func withALoopExecutorTheLoopRunsThereAndTheWorkOnTheEventLoops() async throws {
        enum Place: Sendable, Equatable {
            case accepted(UInt64, onEventLoop: Bool)
            case worked(UInt64, onEventLoop: Bool)
        }
        let places = EventCollector<Place>()
        let consumer = FakeConsumer {}
        let loop = Task {
            try await ConsumerLoop.run(consumer, loopExecutor: DispatchTaskExecutor()) { delivery, _ in
                let tag = delivery.deliveryTag
                places.record(.accepted(tag, onEventLoop: MultiThreadedEventLoopGroup.currentEventLoop != nil))
                return {
                    await Task.yield()  // and after a suspension too
                    places.record(.worked(tag, onEventLoop: MultiThreadedEventLoopGroup.currentEventLoop != nil))
                }
            }
        }
        for tag: UInt64 in 1...3 { consumer.send(tag) }
        _ = await places.wait { $0.count == 6 }
        try await consumer.cancel()
        try await loop.value
        let seen = places.events
        for tag: UInt64 in 1...3 {
            #expect(seen.contains(.accepted(tag, onEventLoop: false)))
            #expect(seen.contains(.worked(tag, onEventLoop: true)))
        }
    }
}
