import Foundation
import HeraldMessaging
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// The topology against the real broker: retry queues deliver back after their delay with the attempt count,
/// quorum work queues dead-letter to parking, and the committed definitions file is the export.
@Suite(.needsServices, .timeLimit(.minutes(1))) struct TopologyTests {
    static let logger = Logger(label: "HeraldMessagingTests.Topology")

    @Test func committedDefinitionsFileIsTheQuorumExport() throws {
        let path = TestServices.repositoryRoot + "/deploy/rabbitmq/definitions.json"
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        // Regenerate with: herald topology export --queue-type quorum > deploy/rabbitmq/definitions.json
        #expect(committed == Topology(queueType: .quorum).definitionsJSON())
    }

    @Test func exportListsEveryDeclaredQueueWithItsArguments() throws {
        let topology = Topology(prefix: "p", queueType: .classic, retryDelays: [.milliseconds(1500), .seconds(60)])
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(topology.definitionsJSON().utf8)) as? [String: Any])
        let queues = try #require(json["queues"] as? [[String: Any]])
        #expect(
            queues.compactMap { $0["name"] as? String } == [
                "p.jobs", "p.batches", "p.retry.1500ms", "p.retry.1m", "p.parked", "p.webhooks",
                "p.webhooks.retry.1500ms", "p.webhooks.retry.1m", "p.webhooks.parked",
            ])
        let retry = try #require(queues[2]["arguments"] as? [String: Any])
        #expect(retry["x-message-ttl"] as? Int == 1500)
        #expect(retry["x-dead-letter-routing-key"] as? String == "p.batches")
        let webhookRetry = try #require(queues[6]["arguments"] as? [String: Any])
        #expect(webhookRetry["x-message-ttl"] as? Int == 1500)
        #expect(webhookRetry["x-dead-letter-routing-key"] as? String == "p.webhooks")
        let jobs = try #require(queues[0]["arguments"] as? [String: Any])
        #expect(jobs["x-max-priority"] as? Int == 3)
        // The webhooks queue and its parking queue are bounded; the oldest messages go first past the bound.
        for (index, length) in [(5, Topology.webhooksMaximumLength), (8, Topology.webhooksParkedMaximumLength)] {
            let bounded = try #require(queues[index]["arguments"] as? [String: Any])
            #expect(bounded["x-max-length"] as? Int64 == length || bounded["x-max-length"] as? Int == Int(length))
            #expect(bounded["x-overflow"] as? String == "drop-head")
        }
        #expect((json["bindings"] as? [[String: Any]])?.first?["destination"] as? String == "p.jobs")
    }

    @Test func aWaitGoesToTheLongestDelayQueueNotLongerThanItElseTheShortest() {
        let topology = Topology(
            prefix: "p", queueType: .classic, retryDelays: [.seconds(10), .seconds(1), .seconds(60)])
        #expect(topology.delayQueue(for: .milliseconds(300)) == "p.retry.1s")
        #expect(topology.delayQueue(for: .seconds(1)) == "p.retry.1s")
        #expect(topology.delayQueue(for: .seconds(59)) == "p.retry.10s")
        #expect(topology.delayQueue(for: .seconds(3600)) == "p.retry.1m")
    }

    @Test(arguments: Topology.QueueType.allCases)
    func retryQueueDeliversBackToBatchesAfterItsDelayWithTheAttemptCount(_ queueType: Topology.QueueType) async throws {
        let topology = Topology(
            prefix: TestServices.uniqueName("herald-test-retry"), queueType: queueType,
            retryDelays: [.milliseconds(300)])
        let connection = try await AMQPConnection.connect(
            AMQPConfiguration(url: TestServices.amqpURL), logger: Self.logger)
        try await topology.declare(on: connection)
        let consumer = try await connection.consume(queue: topology.batches, prefetch: 1)

        let published = ContinuousClock.now
        try await connection.publish(
            Array("batch 7".utf8), routingKey: topology.retryQueue(after: 1),
            properties: AMQPProperties(headers: [ParkingHeader.attempts: 2]), mandatory: true)
        var iterator = consumer.makeAsyncIterator()
        let delivery = try #require(try await iterator.next())
        let waited = ContinuousClock.now - published

        #expect(delivery.body == Array("batch 7".utf8))
        #expect(delivery.routingKey == topology.batches)
        #expect(delivery.properties.headers[ParkingHeader.attempts] == 2)
        #expect(delivery.properties.persistent)
        #expect(waited >= .milliseconds(250))  // the TTL, less timer slack
        try await consumer.ack(delivery)
        try await consumer.cancel()
        try await topology.delete(on: connection)
        await connection.close()
    }

    /// A quorum work queue past its delivery limit dead-letters to the parking queue instead of dropping the
    /// message; queues declared before they had that target are still taken as they are.
    @Test func quorumWorkQueuesDeadLetterToParkingAndOlderQueuesAreKept() async throws {
        let topology = Topology(
            prefix: TestServices.uniqueName("herald-test-dlx"), queueType: .quorum, deliveryLimit: 1)
        let connection = try await AMQPConnection.connect(
            AMQPConfiguration(url: TestServices.amqpURL), logger: Self.logger)
        try await topology.declare(on: connection)
        let consumer = try await connection.consume(queue: topology.jobs, prefetch: 1)
        try await connection.publish(Array("job".utf8), routingKey: topology.jobs, mandatory: true)
        var iterator = consumer.makeAsyncIterator()
        // Delivered, handed back, delivered again, handed back: past the limit of 1, it goes to the parking queue.
        for _ in 0..<2 {
            let delivery = try #require(try await iterator.next())
            try await consumer.nack(delivery, requeue: true)
        }
        let parked = try await connection.consume(queue: topology.parked, prefetch: 1)
        var parkedIterator = parked.makeAsyncIterator()
        let dead = try #require(try await parkedIterator.next())
        #expect(dead.body == Array("job".utf8))
        try await parked.ack(dead)
        try await consumer.cancel()
        try await parked.cancel()
        try await topology.delete(on: connection)

        // A quorum jobs queue as Herald declared it before it had a dead-letter target.
        let older = Topology(prefix: TestServices.uniqueName("herald-test-older"), queueType: .quorum)
        _ = try await connection.declareQueue(
            older.jobs, arguments: ["x-queue-type": "quorum", "x-delivery-limit": .int(20)])
        #expect(try await older.declare(on: connection) == [older.jobs])
        try await older.delete(on: connection)
        await connection.close()
    }

    /// Classic work queues have four priority levels: messages at `Job.brokerPriority`'s 5 (capped to the queue's
    /// 3), 2, 1 and 0 are delivered in that order, whatever order they were queued in. A classic queue from before
    /// priorities is taken as it is.
    @Test func classicWorkQueuesDeliverTheHigherPriorityFirstAndOlderQueuesAreKept() async throws {
        let topology = Topology(prefix: TestServices.uniqueName("herald-test-priority"), queueType: .classic)
        let connection = try await AMQPConnection.connect(
            AMQPConfiguration(url: TestServices.amqpURL), logger: Self.logger)
        #expect(try await topology.declare(on: connection) == [])
        let queued: [(String, UInt8)] = [
            ("power-aware bulk", 0), ("immediate bulk 1", 2), ("power-aware", 1), ("immediate bulk 2", 2),
            ("immediate", 5),
        ]
        for (body, priority) in queued {
            try await connection.publish(
                Array(body.utf8), routingKey: topology.batches, properties: AMQPProperties(priority: priority),
                mandatory: true)
        }
        let consumer = try await connection.consume(queue: topology.batches, prefetch: 1)
        var iterator = consumer.makeAsyncIterator()
        var order: [String] = []
        for _ in queued {
            let delivery = try #require(try await iterator.next())
            order.append(String(decoding: delivery.body, as: UTF8.self))
            try await consumer.ack(delivery)
        }
        #expect(order == ["immediate", "immediate bulk 1", "immediate bulk 2", "power-aware", "power-aware bulk"])
        try await consumer.cancel()
        try await topology.delete(on: connection)

        // Work queues as Herald declared them before priorities.
        let older = Topology(prefix: TestServices.uniqueName("herald-test-fifo"), queueType: .classic)
        for queue in [older.jobs, older.batches] { _ = try await connection.declareQueue(queue, arguments: [:]) }
        #expect(try await older.declare(on: connection) == [older.jobs, older.batches])
        try await older.delete(on: connection)

        // Webhook queues as Herald declared them before they were bounded: taken as they are too.
        let unbounded = Topology(prefix: TestServices.uniqueName("herald-test-unbounded"), queueType: .classic)
        for queue in [unbounded.webhooks, unbounded.webhooksParked] {
            _ = try await connection.declareQueue(queue, arguments: [:])
        }
        #expect(try await unbounded.declare(on: connection) == [unbounded.webhooks, unbounded.webhooksParked])
        try await unbounded.delete(on: connection)
        await connection.close()
    }
}
