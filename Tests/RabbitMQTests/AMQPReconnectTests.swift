import HeraldTestSupport
import RabbitMQ
import Synchronization
import Testing

/// Reconnection through a ``TCPProxy`` in front of the real broker, so that only this suite's connections are cut.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(1))) struct AMQPReconnectTests {
    /// Deterministic and fast: no jitter, 20 ms then 40 ms … at most 200 ms between attempts.
    static let policy = ReconnectPolicy(
        initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200), jitter: 0, random: { 0 })

    private func connectThroughProxy(
        heartbeat: Duration = .seconds(30),
        policy: ReconnectPolicy = Self.policy,
        name: String = #function,
        onConnect: AMQPConnection.ConnectHook? = nil
    ) async throws -> (AMQPConnection, TCPProxy) {
        var configuration = try Broker.configuration(name: name)
        let proxy = try TCPProxy(upstreamHost: configuration.host, upstreamPort: configuration.port)
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.heartbeat = heartbeat
        configuration.reconnect = policy
        let connection = try await AMQPConnection.connect(configuration, logger: Broker.logger, onConnect: onConnect)
        return (connection, proxy)
    }

    @Test func consumerResumesOnTheSameIteratorAndUnackedDeliveriesComeBack() async throws {
        let queue = Broker.uniqueQueue()
        let hookRuns = Atomic(0)
        let (connection, proxy) = try await connectThroughProxy { connection in
            hookRuns.add(1, ordering: .relaxed)
            _ = try await connection.declareQueue(queue, durable: true)
        }
        #expect(hookRuns.load(ordering: .relaxed) == 1)
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        try await connection.publish(Array("first".utf8), routingKey: queue)
        let unacked = try await consumer.nextDelivery()
        #expect(!unacked.redelivered)

        proxy.drop()

        // The same consumer goes on: the unacknowledged message comes back from the broker.
        let again = try await consumer.nextDelivery()
        #expect(again.body == unacked.body)
        #expect(again.redelivered)
        #expect(hookRuns.load(ordering: .relaxed) == 2)
        #expect(connection.isConnected)
        #expect(connection.reconnectCount == 1)
        // Settling the delivery of the lost connection does nothing (and, above all, acks nothing else).
        try await consumer.ack(unacked)
        try await connection.publish(Array("second".utf8), routingKey: queue)
        let second = try await consumer.nextDelivery()
        #expect(second.body == Array("second".utf8))
        try await consumer.ack(again)
        try await consumer.ack(second)
        try await consumer.cancel()
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
        #expect(connection.state == .closed)
    }

    @Test func publishInFlightWhenHeartbeatsStopFailsAndTheNextOneGoesOut() async throws {
        let queue = Broker.uniqueQueue()
        let (connection, proxy) = try await connectThroughProxy(heartbeat: .seconds(1)) { connection in
            _ = try await connection.declareQueue(queue, durable: false)
        }
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        try await connection.publish(Array("before".utf8), routingKey: queue)  // opens the publisher channel
        try await consumer.ack(try await consumer.nextDelivery())

        proxy.freeze()
        // Never reaches the broker, so never confirmed: after two silent heartbeat intervals it fails clearly.
        let error = await #expect(throws: AMQPError.self) {
            try await connection.publish(Array("lost".utf8), routingKey: queue)
        }
        #expect(error?.code == .connectionClosed)
        #expect(error?.message.contains("before the broker confirmed") == true)

        try await withTimeout { try await connection.publish(Array("after".utf8), routingKey: queue) }
        // "before" may come back too: its ack can have been swallowed by the frozen link (at least once).
        var delivery = try await consumer.nextDelivery()
        while delivery.body == Array("before".utf8) {
            try await consumer.ack(delivery)
            delivery = try await consumer.nextDelivery()
        }
        #expect(delivery.body == Array("after".utf8))
        try await consumer.ack(delivery)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func publishesIssuedWhileReconnectingWaitForTheNewConnection() async throws {
        let queue = Broker.uniqueQueue()
        let (connection, proxy) = try await connectThroughProxy { connection in
            _ = try await connection.declareQueue(queue, durable: false)
        }
        var connections = proxy.connections.makeAsyncIterator()
        #expect(await connections.next() == 1)
        proxy.refuse(true)
        proxy.drop()
        // Wait until the connection noticed; the proxy then turns its attempts away.
        try await eventually { !connection.isConnected }
        #expect(connection.state == .reconnecting)

        let publish = Task { try await connection.publish([42], routingKey: queue) }
        proxy.refuse(false)
        try await withTimeout { try await publish.value }
        #expect(connection.isConnected)
        #expect(try await connection.queueMessageCount(queue) == 1)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func closeWhileReconnectingEndsConsumersAndWaitingPublishes() async throws {
        let queue = Broker.uniqueQueue()
        let (connection, proxy) = try await connectThroughProxy { connection in
            _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        }
        let consumer = try await connection.consume(queue: queue, prefetch: 1)
        proxy.refuse(true)
        proxy.drop()
        try await eventually { connection.state == .reconnecting }
        let publish = Task { try await connection.publish([1], routingKey: queue) }

        await connection.close()

        var iterator = consumer.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        let error = await #expect(throws: AMQPError.self) { try await publish.value }
        #expect(error?.code == .closed)
        #expect(connection.state == .closed)
    }

    @Test func givingUpAfterTheMaximumAttemptsFailsTheConsumer() async throws {
        var policy = Self.policy
        policy.maximumAttempts = 3
        let (connection, proxy) = try await connectThroughProxy(policy: policy)
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)
        proxy.refuse(true)
        proxy.drop()

        let error = await #expect(throws: AMQPError.self) {
            try await withTimeout {
                for try await _ in consumer {}
            }
        }
        #expect(error?.code == .connectionFailed)
        #expect(connection.state == .closed)
        await connection.close()
    }

    @Test func brokerBlockingPublishersIsObservedAndPublishesWaitUntilUnblocked() async throws {
        let queue = Broker.uniqueQueue()
        let (connection, proxy) = try await connectThroughProxy()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        try await connection.publish([0], routingKey: queue)  // opens the publisher channel

        // connection.blocked (class 10, method 60, reason "low on memory") as the broker sends it.
        let reason = Array("low on memory".utf8)
        let blockedPayload: [UInt8] = [0, 10, 0, 60, UInt8(reason.count)] + reason
        proxy.injectToClient(Self.methodFrame(blockedPayload))
        try await eventually { connection.isBlocked }
        let publish = Task { try await connection.publish([1], routingKey: queue) }

        proxy.injectToClient(Self.methodFrame([0, 10, 0, 61]))  // connection.unblocked
        try await withTimeout { try await publish.value }
        #expect(!connection.isBlocked)
        #expect(try await connection.queueMessageCount(queue) == 2)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    private static func methodFrame(_ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(payload.count)
        return [1, 0, 0] + [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + payload + [0xCE]
    }
}

/// Waits until `condition` holds, checking it every few milliseconds; fails the test after `limit`.
/// For state that has no event to wait on (connection state read by health checks).
func eventually(_ limit: Duration = .seconds(15), _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTimeout(limit) {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}
