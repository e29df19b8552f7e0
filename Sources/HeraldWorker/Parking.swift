import Logging
import RabbitMQ

/// Publishes messages that can never succeed to the parking queue, with the reason, the attempts and the origin
/// queue in headers, and confirms before the caller acknowledges the original.
struct Parking: Sendable {
    let publisher: AMQPConnection
    let topology: Topology

    func park(
        _ body: [UInt8],
        properties: AMQPProperties = .init(),
        reason: String,
        attempts: Int,
        origin: String
    ) async throws {
        var properties = properties
        properties.persistent = true
        properties.headers[ParkingHeader.reason] = .string(String(reason.prefix(1000)))
        properties.headers[ParkingHeader.originQueue] = .string(origin)
        properties.headers[ParkingHeader.attempts] = .int(Int64(attempts))
        try await publisher.publish(body, routingKey: topology.parked, properties: properties, mandatory: true)
    }
}
