import HeraldTestSupport
import RabbitMQ
import Testing

/// Integration tests against the real broker: each uses its own queues and deletes them.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(1))) struct AMQPConnectionTests {
    @Test func publishedMessageArrivesWithItsPropertiesAndHeaders() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let properties = AMQPProperties(
            contentType: "application/json", messageID: "job-1", correlationID: "corr-1", persistent: true,
            headers: ["x-attempt": 2, "x-reason": "retry", "x-flags": ["a": true], "x-list": [1, "b"]],
            expiration: "60000", timestamp: 1_750_000_000)
        let body = Array(#"{"hello":"world"}"#.utf8)

        try await connection.publish(body, routingKey: queue, properties: properties)
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        let delivery = try await consumer.nextDelivery()

        #expect(delivery.body == body)
        #expect(delivery.properties == properties)
        #expect(delivery.exchange == "")
        #expect(delivery.routingKey == queue)
        #expect(!delivery.redelivered)
        try await consumer.ack(delivery)
        try await consumer.cancel()
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    /// A body over the consumer's limit is dropped frame by frame as it arrives, never held: the delivery carries
    /// its announced size and no body, and the messages after it arrive whole.
    @Test func aBodyOverTheConsumersLimitIsDeliveredWithoutItAndTheNextArrivesWhole() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let large = [UInt8](repeating: 0x61, count: 3 << 20)
        try await connection.publish(large, routingKey: queue, properties: AMQPProperties(messageID: "large"))
        try await connection.publish(Array("small".utf8), routingKey: queue, properties: AMQPProperties(messageID: "s"))
        let consumer = try await connection.consume(queue: queue, prefetch: 10, maximumBodySize: 1 << 20)
        let first = try await consumer.nextDelivery()
        #expect(first.properties.messageID == "large")
        #expect(first.body.isEmpty)
        #expect(first.bodySize == 3 << 20)
        let second = try await consumer.nextDelivery()
        #expect(second.body == Array("small".utf8))
        #expect(second.bodySize == 5)
        try await consumer.ack(first)
        try await consumer.ack(second)
        try await consumer.cancel()
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func manyConcurrentPublishesAreAllConfirmed() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let count = 2_000

        try await withThrowingDiscardingTaskGroup { group in
            for index in 0..<count {
                group.addTask {
                    try await connection.publish(Array("message \(index)".utf8), routingKey: queue)
                }
            }
        }

        #expect(try await connection.queueMessageCount(queue) == UInt32(count))
        try await connection.purgeQueue(queue)
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    /// `publish(contentsOf:)`: one wait for many messages, larger than the connection's window of unconfirmed
    /// publishes; they arrive in order with their own properties. A batch with a returned mandatory message
    /// fails with that reason once all of it is settled.
    @Test func aBatchOfPublishesIsConfirmedAsOneAndArrivesInOrder() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let count = 3_000
        try await connection.publish(
            contentsOf: (0..<count).map { (Array("message \($0)".utf8), AMQPProperties(messageID: "m\($0)")) },
            routingKey: queue)
        #expect(try await connection.queueMessageCount(queue) == UInt32(count))

        let consumer = try await connection.consume(queue: queue, prefetch: 100)
        for index in 0..<count {
            let delivery = try await consumer.nextDelivery()
            #expect(delivery.body == Array("message \(index)".utf8))
            #expect(delivery.properties.messageID == "m\(index)")
            try await consumer.ack(delivery)
        }
        try await consumer.cancel()

        let error = await #expect(throws: AMQPError.self) {
            try await connection.publish(
                contentsOf: [([1], AMQPProperties()), ([2], AMQPProperties())], routingKey: Broker.uniqueQueue(),
                mandatory: true)
        }
        #expect(error?.code == .messageReturned)
        try await connection.publish(contentsOf: [], routingKey: queue)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func largeMessagesSpanningFramesArriveWhole() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

        try await connection.publish(body, routingKey: queue)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)
        let delivery = try await consumer.nextDelivery()

        #expect(delivery.body == body)
        try await consumer.ack(delivery)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func mandatoryPublishToAMissingQueueFailsAsReturned() async throws {
        let connection = try await Broker.connect()
        let missing = Broker.uniqueQueue()

        let error = await #expect(throws: AMQPError.self) {
            try await connection.publish([1, 2, 3], routingKey: missing, mandatory: true)
        }
        #expect(error?.code == .messageReturned)
        #expect(error?.replyCode == 312)

        // Without mandatory the broker confirms an unroutable message, and the channel is still usable.
        try await connection.publish([1, 2, 3], routingKey: missing)
        await connection.close()
    }

    @Test func prefetchBoundsUnacknowledgedDeliveries() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        for index in 0..<20 { try await connection.publish([UInt8(index)], routingKey: queue) }

        let consumer = try await connection.consume(queue: queue, prefetch: 5)
        var unacknowledged: [AMQPDelivery] = []
        for _ in 0..<5 { unacknowledged.append(try await consumer.nextDelivery()) }
        // With five unacknowledged the broker holds the other fifteen back.
        #expect(try await connection.queueMessageCount(queue) == 15)

        var received = 5
        var maximum = unacknowledged.count
        while received < 20 {
            try await consumer.ack(unacknowledged.removeFirst())
            unacknowledged.append(try await consumer.nextDelivery())
            received += 1
            maximum = max(maximum, unacknowledged.count)
            #expect(try await connection.queueMessageCount(queue) == UInt32(20 - received))
        }
        #expect(maximum == 5)
        #expect(unacknowledged.map(\.body) == (15..<20).map { [UInt8($0)] })
        try await consumer.ack(unacknowledged.last!, multiple: true)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    /// Acks sent in a burst go out as one `multiple` ack where they can; one delivery left open in the middle
    /// must stay open (a `multiple` ack reaching past it would lose it), and comes back when the consumer ends.
    /// The same whether the acks are made one by one or together (`ack(_:)` of a collection, one turn).
    @Test(arguments: [false, true]) func aBurstOfAcksAroundAnOpenDeliveryLeavesItOpen(together: Bool) async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        for index in 0..<40 { try await connection.publish([UInt8(index)], routingKey: queue) }
        // The consumer is released at the end of this block, which closes its channel.
        let open: AMQPDelivery
        do {
            let consumer = try await connection.consume(queue: queue, prefetch: 50)
            var deliveries: [AMQPDelivery] = []
            for _ in 0..<40 { deliveries.append(try await consumer.nextDelivery()) }
            open = deliveries.remove(at: 17)
            if together {
                try await consumer.ack(deliveries)
            } else {
                for delivery in deliveries { try await consumer.ack(delivery) }
            }
            try await consumer.cancel()
        }
        // Releasing the consumer closed its channel: the broker requeues what it still counts as unacknowledged,
        // all at once. Exactly one message means the 39 acks arrived and none of them took the open one along.
        #expect(try await connection.waitForReadyMessages(in: queue) == 1)
        let again = try await connection.consume(queue: queue, prefetch: 1)
        let redelivered = try await again.nextDelivery()
        #expect(redelivered.body == open.body)
        #expect(redelivered.redelivered)
        try await again.ack(redelivered)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    /// Plain acks go to the connection thread without waking it each time, and a busy consumer's `multiple` ack
    /// waits for a quarter of its prefetch: the broker must still get every ack while the consumer goes on. Three
    /// prefetches' worth arrive only if the acks reach the broker on the way; once the last is acked, the broker
    /// counts none unacknowledged while the consumer is still open (no cancel or close sends them).
    @Test func acksOfABusyConsumerAllReachTheBrokerWhileItGoesOn() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        // Not a whole number of the consumer's ack batch (250): the last acks wait for the hold limit.
        let count = 2990
        try await connection.publishNumbered(count, to: queue)
        let consumer = try await connection.consume(queue: queue, prefetch: 1000)
        for _ in 0..<count { try await consumer.ack(try await consumer.nextDelivery()) }
        // Asked until the broker says so (each answer takes rabbitmqctl's start-up, about a second); the suite's
        // time limit ends the wait if the acks never come.
        while try await Broker.unacknowledged(in: queue) != 0 { try Task.checkCancellation() }
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await consumer.cancel()
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    /// A nack in the middle of a burst of acks goes out at once; the acks that follow may then be one `multiple`
    /// ack past it, which must not take the requeued message with it.
    @Test func aNackAmongABurstOfAcksIsRequeuedAndTheRestAreAcknowledged() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        for index in 0..<10 { try await connection.publish([UInt8(index)], routingKey: queue) }
        let last: AMQPDelivery
        do {
            let consumer = try await connection.consume(queue: queue, prefetch: 20)
            var deliveries: [AMQPDelivery] = []
            for _ in 0..<10 { deliveries.append(try await consumer.nextDelivery()) }
            // The last stays open, as a marker: it is all the broker should hold when the channel closes.
            last = deliveries.removeLast()
            for (index, delivery) in deliveries.enumerated() {
                if index == 4 {
                    try await consumer.nack(delivery, requeue: true)
                } else {
                    try await consumer.ack(delivery)
                }
            }
            let again = try await consumer.nextDelivery()
            #expect(again.body == deliveries[4].body)
            #expect(again.redelivered)
            try await consumer.ack(again)
            try await consumer.cancel()
        }
        // The consumer is released: exactly the open marker comes back, so every ack (before and after the nack,
        // and of the redelivery) was applied and none reached past the marker.
        #expect(try await connection.waitForReadyMessages(in: queue) == 1)
        let check = try await connection.consume(queue: queue, prefetch: 1)
        let marker = try await check.nextDelivery()
        #expect(marker.body == last.body)
        try await check.ack(marker)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func nackWithRequeueRedeliversTheMessage() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        try await connection.publish(Array("again".utf8), routingKey: queue)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)

        let first = try await consumer.nextDelivery()
        #expect(!first.redelivered)
        try await consumer.nack(first, requeue: true)
        let second = try await consumer.nextDelivery()
        #expect(second.redelivered)
        #expect(second.body == first.body)
        try await consumer.reject(second, requeue: true)
        let third = try await consumer.nextDelivery()
        #expect(third.redelivered)
        try await consumer.ack(third)

        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func unacknowledgedMessagesOfAClosedConnectionGoToAnotherConsumer() async throws {
        let first = try await Broker.connect()
        let second = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await first.declareQueue(queue, durable: false)
        try await first.publish(Array("handover".utf8), routingKey: queue)

        let firstConsumer = try await first.consume(queue: queue, prefetch: 1)
        let taken = try await firstConsumer.nextDelivery()
        #expect(!taken.redelivered)
        let secondConsumer = try await second.consume(queue: queue, prefetch: 1)
        await first.close()

        let redelivered = try await secondConsumer.nextDelivery()
        #expect(redelivered.body == taken.body)
        #expect(redelivered.redelivered)
        try await secondConsumer.ack(redelivered)
        // The closed connection's consumer ends, and settling on it fails.
        var iterator = firstConsumer.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        await #expect(throws: AMQPError.self) { try await firstConsumer.ack(taken) }

        try await second.deleteQueue(queue)
        await second.close()
    }

    @Test func wrongPasswordFailsWithAuthenticationFailed() async throws {
        var configuration = try Broker.configuration()
        configuration.password = "definitely-wrong"
        let error = await #expect(throws: AMQPError.self) {
            try await AMQPConnection.connect(configuration, logger: Broker.logger)
        }
        #expect(error?.code == .authenticationFailed)
        #expect(error.map { !$0.description.contains("definitely-wrong") } ?? false)
    }

    @Test func unreachableBrokerFailsWithConnectionFailed() async throws {
        var configuration = try Broker.configuration()
        configuration.port = 1
        let error = await #expect(throws: AMQPError.self) {
            try await AMQPConnection.connect(configuration, logger: Broker.logger)
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test func missingQueueFailsWithNotFoundAndTheNextOperationStillWorks() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()

        let error = await #expect(throws: AMQPError.self) { try await connection.queueMessageCount(queue) }
        #expect(error?.code == .channelClosed)
        #expect(error?.replyCode == 404)

        let declared = try await connection.declareQueue(queue, durable: false)
        #expect(declared.messageCount == 0)
        #expect(declared.consumerCount == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func checkingAnExchangeCreatesNothingAndAMissingOneFailsWithNotFound() async throws {
        let connection = try await Broker.connect()
        let exchange = Broker.uniqueQueue()

        let error = await #expect(throws: AMQPError.self) { try await connection.checkExchange(exchange) }
        #expect(error?.code == .channelClosed)
        #expect(error?.replyCode == 404)
        // Still missing: the check created nothing, and the next operation gets a fresh channel.
        let again = await #expect(throws: AMQPError.self) { try await connection.checkExchange(exchange) }
        #expect(again?.replyCode == 404)

        try await connection.declareExchange(exchange, type: "topic", durable: false)
        try await connection.checkExchange(exchange)
        try await connection.deleteExchange(exchange)
        await connection.close()
    }

    @Test func publishToAMissingExchangeFailsAndPublishingRecovers() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)

        let error = await #expect(throws: AMQPError.self) {
            try await connection.publish([0], exchange: "herald-test-no-such-exchange", routingKey: queue)
        }
        #expect(error?.code == .channelClosed)
        #expect(error?.replyCode == 404)

        try await connection.publish([1], routingKey: queue)
        #expect(try await connection.queueMessageCount(queue) == 1)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func consumingAMissingQueueFailsWithNotFound() async throws {
        let connection = try await Broker.connect()
        let error = await #expect(throws: AMQPError.self) {
            try await connection.consume(queue: Broker.uniqueQueue(), prefetch: 1)
        }
        #expect(error?.replyCode == 404)
        await connection.close()
    }

    @Test func cancelEndsIterationAfterBufferedDeliveries() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        try await connection.publish([7], routingKey: queue)
        let consumer = try await connection.consume(queue: queue, prefetch: 2)
        let delivery = try await consumer.nextDelivery()

        try await consumer.cancel()
        try await consumer.ack(delivery)  // still allowed after cancel
        var iterator = consumer.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func closeIsIdempotentAndLaterCallsFailAsClosed() async throws {
        let connection = try await Broker.connect()
        await connection.close()
        await connection.close()
        let error = await #expect(throws: AMQPError.self) { try await connection.publish([1], routingKey: "x") }
        #expect(error?.code == .closed)
    }

    @Test func brokerClosingTheConnectionFailsConsumersAndLaterPublishes() async throws {
        let configuration = try Broker.configuration()
        let connection = try await AMQPConnection.connect(configuration, logger: Broker.logger)
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)

        try Broker.forceClose(connectionNamed: try #require(configuration.connectionName))

        let error = await #expect(throws: AMQPError.self) {
            try await withTimeout {
                for try await _ in consumer {}
            }
        }
        #expect(error?.code == .connectionClosed)
        #expect(error?.replyCode == 320)
        let publishError = await #expect(throws: AMQPError.self) {
            try await connection.publish([1], routingKey: queue)
        }
        #expect(publishError?.code == .connectionClosed)
        await connection.close()
    }
}
