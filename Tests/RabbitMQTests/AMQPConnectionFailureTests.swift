import HeraldTestSupport
import RabbitMQ
import Synchronization
import Testing

/// The network failing under a live connection, through a ``TCPProxy`` in front of the real broker:
/// everything waiting must fail with an `AMQPError`, promptly, without a crash or a hang.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(2))) struct AMQPConnectionFailureTests {
    private func connectThroughProxy(heartbeat: Duration = .seconds(30)) async throws
        -> (AMQPConnection, TCPProxy)
    {
        var configuration = try Broker.configuration()
        let proxy = try TCPProxy(upstreamHost: configuration.host, upstreamPort: configuration.port)
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.heartbeat = heartbeat
        return (try await AMQPConnection.connect(configuration, logger: Broker.logger), proxy)
    }

    @Test func droppedSocketFailsTheConsumerAndOutstandingPublishes() async throws {
        let (connection, proxy) = try await connectThroughProxy()
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)
        try await connection.publish([1], routingKey: queue)
        _ = try await consumer.nextDelivery()  // now the consumer waits with one unacknowledged

        proxy.drop()

        let error = await #expect(throws: AMQPError.self) {
            try await withTimeout {
                for try await _ in consumer {}
            }
        }
        #expect(error?.code == .connectionClosed)
        let publishError = await #expect(throws: AMQPError.self) {
            try await connection.publish([2], routingKey: queue)
        }
        #expect(publishError?.code == .connectionClosed)
        await connection.close()  // after a failure, close returns at once
    }

    @Test func silentBrokerIsDetectedByMissedHeartbeats() async throws {
        let (connection, proxy) = try await connectThroughProxy(heartbeat: .seconds(1))
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false, autoDelete: true)
        let consumer = try await connection.consume(queue: queue, prefetch: 1)

        proxy.freeze()
        let publish = Task { try await connection.publish([1], routingKey: queue) }

        // No frame arrives any more, so after two heartbeat intervals the connection counts as lost.
        let error = await #expect(throws: AMQPError.self) {
            try await withTimeout(.seconds(10)) {
                for try await _ in consumer {}
            }
        }
        #expect(error?.code == .connectionClosed)
        let publishError = await #expect(throws: AMQPError.self) { try await publish.value }
        #expect(publishError?.code == .connectionClosed)
        await connection.close()
    }

    @Test func idleConnectionSendsHeartbeatsAndStaysOpen() async throws {
        // 3 s rather than 1 s: loss is declared after two silent intervals, and on a loaded 2-core machine the
        // broker's own heartbeats arrived late by scheduling alone: a 2 s window (4 s of silence) was missed in a CI
        // run beside the database outage suite (2026-11-25).
        let (connection, proxy) = try await connectThroughProxy(heartbeat: .seconds(3))

        // Nothing else is sent, so these can only be heartbeats from the connection thread's idle wake-ups;
        // three of them span more than the two intervals after which the broker would give up on us.
        // Counted outside the wait, so that a timeout still says how many came and when: in about one make test
        // run in four (at 1482bf4 too), right after the frozen-proxy test, none came within 20 s; cause not found
        // yet. 45 s tells a late start from heartbeats that never come.
        let seen = Mutex<[ContinuousClock.Instant]>([])
        let started = ContinuousClock.now
        do {
            try await withTimeout(.seconds(45)) {
                for await _ in proxy.clientHeartbeats {
                    let count = seen.withLock { seen in
                        seen.append(.now)
                        return seen.count
                    }
                    if count == 3 { break }
                }
            }
        } catch {
            let times = seen.withLock { $0.map { started.duration(to: $0) } }
            Issue.record(
                "\(times.count) client heartbeats in 45 s, at \(times); connection \(connection.state), \(connection.reconnectCount) reconnects"
            )
            throw error
        }
        #expect(seen.withLock { $0.count } == 3)

        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        try await connection.deleteQueue(queue)
        await connection.close()
    }
}
