import HeraldTestSupport
import RabbitMQ
import Testing

/// basic.get through `AMQPQueueReader`, against the real broker.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(1))) struct AMQPQueueReaderTests {
    @Test func aReaderSeesEveryReadyMessageOnceAndWhatItDoesNotSettleGoesBackWhenItCloses() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        for n in 0..<4 {
            try await connection.publish(
                Array("\(n)".utf8), routingKey: queue, properties: AMQPProperties(headers: ["x-n": .int(Int64(n))]))
        }
        let reader = try await connection.reader(of: queue)
        var taken: [AMQPDelivery] = []
        while let delivery = try await reader.get() { taken.append(delivery) }
        // Held unacknowledged, none comes back to the reader: each ready message once, in order.
        #expect(taken.map { String(decoding: $0.body, as: UTF8.self) } == ["0", "1", "2", "3"])
        #expect(taken.map { $0.properties.headers["x-n"] } == [0, 1, 2, 3])
        #expect(taken.allSatisfy { !$0.redelivered && $0.routingKey == queue })

        try await reader.ack(taken[0])
        try await reader.nack(taken[1], requeue: false)
        try await reader.nack(taken[2], requeue: true)
        // Requeued: ready again, and taken again as a redelivery.
        let again = try #require(try await reader.get())
        #expect(again.body == Array("2".utf8))
        #expect(again.redelivered)
        #expect(try await reader.get() == nil)

        // Closing gives back "2" (taken again, not settled) and "3" (never settled); "0" and "1" are gone.
        await reader.close()
        // Back in the queue by the time close returns.
        #expect(try await connection.queueMessageCount(queue) == 2)
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        var rest: [String] = []
        for _ in 0..<2 {
            let delivery = try await consumer.nextDelivery()
            rest.append(String(decoding: delivery.body, as: UTF8.self))
            try await consumer.ack(delivery)
        }
        #expect(rest.sorted() == ["2", "3"])
        try await consumer.cancel()
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func anEmptyQueueGivesNilAndAMissingQueueFailsWith404() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let reader = try await connection.reader(of: queue)
        #expect(try await reader.get() == nil)

        let missing = try await connection.reader(of: queue + ".missing")
        let error = try await #require(throws: AMQPError.self) { try await missing.get() }
        #expect(error.replyCode == 404)
        // The reader's channel is gone; the connection goes on.
        #expect(try await reader.get() == nil)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func aDeliveryIsSettledOnlyThroughTheReaderThatTookIt() async throws {
        let connection = try await Broker.connect()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        try await connection.publish(Array("x".utf8), routingKey: queue)
        let reader = try await connection.reader(of: queue)
        let other = try await connection.reader(of: queue)
        let delivery = try #require(try await reader.get())
        await #expect(throws: AMQPError.self) { try await other.ack(delivery) }
        try await reader.ack(delivery)
        await other.close()
        await reader.close()
        try await connection.deleteQueue(queue)
        await connection.close()
    }
}
