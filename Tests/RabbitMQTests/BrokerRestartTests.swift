import Foundation
import HeraldTestSupport
import RabbitMQ
import Synchronization
import Testing

/// The real broker restarted mid-stream (`deploy/dev/services.sh restart-rabbitmq`): reconnecting connections lose
/// nothing. Run alone (`swift test --filter BrokerRestartTests`); everything else skips it (`--skip`).
@Suite(.needsServices, .serialized, .timeLimit(.minutes(5)), .tags(.brokerRestart)) struct BrokerRestartTests {
    @Test func numberedStreamSurvivesABrokerRestartWithNothingLost() async throws {
        let queue = Broker.uniqueQueue()
        let declare: AMQPConnection.ConnectHook = { _ = try await $0.declareQueue(queue, durable: true) }
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        var producerConfiguration = try Broker.configuration(name: "restart-producer")
        producerConfiguration.reconnect = policy
        var consumerConfiguration = try Broker.configuration(name: "restart-consumer")
        consumerConfiguration.reconnect = policy
        let producer = try await AMQPConnection.connect(
            producerConfiguration, logger: Broker.logger, onConnect: declare)
        let consumerConnection = try await AMQPConnection.connect(
            consumerConfiguration, logger: Broker.logger, onConnect: declare)
        let consumer = try await consumerConnection.consume(queue: queue, prefetch: 50)

        let received = NumberSink()
        let consuming = Task {
            // One iteration across the restart: the loop must not end when the connection drops.
            for try await delivery in consumer {
                received.record(Int(String(decoding: delivery.body, as: UTF8.self)) ?? -1)
                try await consumer.ack(delivery)
            }
        }
        let restart = Task {
            await received.wait(untilCount: 300)
            return try await Broker.restart()
        }

        // Publish a numbered stream that spans the restart: until the producer has reconnected and at least 2,000
        // are confirmed. A publish that fails (in flight when the broker went away) is published again.
        let next = Counter()
        let republished = Counter()
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<4 {
                group.addTask {
                    while true {
                        let number = next.increment()
                        if number >= 2_000 && producer.reconnectCount > 0 || number >= 500_000 { return }
                        while true {
                            do {
                                try await producer.publish(Array(String(number).utf8), routingKey: queue)
                                break
                            } catch {
                                _ = republished.increment()
                            }
                        }
                    }
                }
            }
        }
        // Each lane drew one number it did not publish. Then a tail published over the reconnected producer: every
        // number before it may have reached the consumer before the broker went down, and only a consumer that
        // reconnected receives the tail.
        let tailStart = next.value - 4
        let published = tailStart + 200
        for number in tailStart..<published {
            try await producer.publish(Array(String(number).utf8), routingKey: queue)
        }
        #expect(try await restart.value == 0)

        let complete = try await withTimeout(.seconds(120)) {
            await received.wait(untilAllBelow: published)
            return true
        }
        #expect(complete)
        #expect(producer.reconnectCount >= 1)
        #expect(consumerConnection.reconnectCount >= 1)
        #expect(consumerConnection.isConnected)
        Broker.logger.info(
            "broker restart test",
            metadata: [
                "published": "\(published)", "republished": "\(republished.value)",
                "duplicates": "\(received.duplicates)",
            ])

        try await consumer.cancel()
        _ = try await consuming.value
        try await producer.deleteQueue(queue)
        await consumerConnection.close()
        await producer.close()
    }
}

/// The numbers a consumer received, with waiters for "at least n distinct" and "every number below n".
final class NumberSink: Sendable {
    private struct State {
        var numbers = Set<Int>()
        var duplicates = 0
        var waiters: [(condition: @Sendable (Set<Int>) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    func record(_ number: Int) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            if !state.numbers.insert(number).inserted { state.duplicates += 1 }
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(state.numbers) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var duplicates: Int { state.withLock { $0.duplicates } }

    func wait(untilCount count: Int) async {
        await wait { $0.count >= count }
    }

    /// Waits until every number in `0..<limit` has arrived (the set holds nothing else, so its size says so).
    func wait(untilAllBelow limit: Int) async {
        await wait { numbers in numbers.count >= limit && (0..<limit).allSatisfy(numbers.contains) }
    }

    private func wait(_ condition: @escaping @Sendable (Set<Int>) -> Bool) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if condition(state.numbers) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// A shared counter for the producer lanes.
final class Counter: Sendable {
    private let count = Atomic(0)

    /// Adds one and returns the value before.
    func increment() -> Int { count.add(1, ordering: .relaxed).oldValue }

    var value: Int { count.load(ordering: .relaxed) }
}
