import Foundation
import HeraldMessaging
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// Parking against the real broker: the message keeps its body and id, becomes persistent, and carries the reason,
/// the attempts and the origin queue in the headers operators read.
@Suite(.needsServices, .timeLimit(.minutes(1))) struct ParkingTests {
    static let logger = Logger(label: "HeraldMessagingTests.Parking")

    @Test(arguments: Topology.QueueType.allCases)
    func parkedMessageCarriesReasonAttemptsAndOrigin(_ queueType: Topology.QueueType) async throws {
        let topology = Topology(prefix: TestServices.uniqueName("herald-test-park"), queueType: queueType)
        let connection = try await AMQPConnection.connect(
            AMQPConfiguration(url: TestServices.amqpURL), logger: Self.logger)
        try await topology.declare(on: connection)

        try await Parking(publisher: connection, topology: topology).park(
            Array("not a job".utf8), properties: AMQPProperties(messageID: "m-1", persistent: false),
            reason: "malformed: not a job", attempts: 3, origin: topology.jobs)
        let consumer = try await connection.consume(queue: topology.parked, prefetch: 1)
        var iterator = consumer.makeAsyncIterator()
        let delivery = try #require(try await iterator.next())

        #expect(delivery.body == Array("not a job".utf8))
        #expect(delivery.properties.messageID == "m-1")
        #expect(delivery.properties.persistent)
        #expect(delivery.properties.headers[ParkingHeader.reason] == "malformed: not a job")
        #expect(delivery.properties.headers[ParkingHeader.attempts] == 3)
        #expect(delivery.properties.headers[ParkingHeader.originQueue] == .string(topology.jobs))
        let now = Int64(Date().timeIntervalSince1970)
        guard case .int(let parkedAt)? = delivery.properties.headers[ParkingHeader.parkedAt] else {
            Issue.record("no \(ParkingHeader.parkedAt) header")
            return
        }
        #expect((now - 60...now).contains(parkedAt))
        try await consumer.ack(delivery)
        try await consumer.cancel()
        try await topology.delete(on: connection)
        await connection.close()
    }
}
