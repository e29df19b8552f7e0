import Foundation
import HeraldCore
import RabbitMQ

/// Publishes messages that can never succeed to the parking queue, with the reason, the attempts and the origin
/// queue in headers, and confirms before the caller acknowledges the original.
///
/// Here rather than in the worker because the parking queue and its headers are part of the messaging contract
/// (`herald.parked`, `ParkingHeader`): operators and tests read what this writes.
package struct Parking: Sendable {
    package let publisher: any MessagePublishing
    package let topology: Topology
    /// The parking time's clock.
    package let clock: HeraldClock

    package init(publisher: any MessagePublishing, topology: Topology, clock: HeraldClock = .system) {
        self.publisher = publisher
        self.topology = topology
        self.clock = clock
    }

    /// Publishes `body` to the parking queue (or `queue`, such as the webhooks' own), persistent, mandatory and
    /// without the producer's `expiration`, and returns once the broker confirmed it.
    package func park(
        _ body: [UInt8],
        properties: AMQPProperties = .init(),
        reason: String,
        attempts: Int,
        origin: String,
        to queue: String? = nil
    ) async throws {
        var properties = properties
        properties.persistent = true
        // The producer's per-message TTL would drop the parked copy from the parking queue before anyone saw it.
        properties.expiration = nil
        properties.headers[ParkingHeader.reason] = .string(String(reason.prefix(1000)))
        properties.headers[ParkingHeader.originQueue] = .string(origin)
        properties.headers[ParkingHeader.attempts] = .int(Int64(attempts))
        properties.headers[ParkingHeader.parkedAt] = .int(clock.unixSeconds)
        try await publisher.publish(
            body, exchange: "", routingKey: queue ?? topology.parked, properties: properties, mandatory: true)
    }
}

/// Where a message is published with a confirm: an `AMQPConnection`, or a fake in fast tests.
package protocol MessagePublishing: Sendable {
    /// Publishes `body` and returns once the broker confirmed it.
    func publish(_ body: [UInt8], exchange: String, routingKey: String, properties: AMQPProperties, mandatory: Bool)
        async throws
}

extension AMQPConnection: MessagePublishing {}
