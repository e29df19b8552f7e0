import AsyncHTTPClient
import HeraldMessaging
import Logging
import RabbitMQ

/// Consumes `herald.webhooks` (the events of the apps with a webhook, bound to the events exchange) and POSTs each
/// to its app's webhook. A failure goes to a webhook retry queue, which returns it after its delay (the retry
/// delays of the topology: 1 s, 10 s, 60 s, 600 s by default); after `WorkerConfiguration.webhookAttempts` it is
/// parked in `herald.webhooks.parked` with the last reason. Each is acknowledged only after its next copy is
/// confirmed, so an event is never lost; a receiver may see one twice and deduplicates by `x-herald-delivery`.
struct WebhookConsumer: Sendable {
    let webhooks: Webhooks
    let client: HTTPClient
    let topology: Topology
    let publisher: AMQPConnection
    let attempts: Int
    let timeout: Duration
    let metrics: WorkerMetrics
    let logger: Logger

    /// The event's routing key, on the copies that wait in a retry queue or are parked.
    static let eventHeader = "x-herald-event"

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        // `job.finished.<app>`: the app is everything after the second dot. A retry copy comes back from its delay
        // queue under that queue's dead-letter key, so it carries the event's own in a header.
        var event = delivery.routingKey
        if case .string(let key)? = delivery.properties.headers[Self.eventHeader] { event = String(key.prefix(300)) }
        let parts = event.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let endpoint = webhooks.byApp[String(parts[2])] else {
            // An app whose webhook was removed while its binding stayed: its events are on the events exchange.
            metrics.webhook("dropped")
            try? await consumer.ack(delivery)
            return
        }
        // Attempts made before this one, as the retry copy carries them; bounded, since anyone may publish here.
        let made: Int
        if case .int(let value)? = delivery.properties.headers[ParkingHeader.attempts] {
            made = Int(min(max(value, 0), Int64(attempts)))
        } else {
            made = 0
        }
        let id = delivery.properties.messageID ?? ""
        let answer = await Webhooks.post(
            delivery.body, event: event, id: String(id.prefix(200)), attempt: made + 1, to: endpoint,
            client: client, timeout: timeout)
        guard case .failed(let reason) = answer else {
            metrics.webhook("delivered")
            try? await consumer.ack(delivery)
            return
        }
        var properties = delivery.properties
        properties.headers[ParkingHeader.attempts] = .int(Int64(made + 1))
        properties.headers[ParkingHeader.reason] = .string(reason)
        properties.headers[Self.eventHeader] = .string(event)
        do {
            if made + 1 < attempts {
                try await publisher.publish(
                    delivery.body, exchange: "", routingKey: topology.webhookRetryQueue(after: made + 1),
                    properties: properties, mandatory: true)
                metrics.webhook("retried")
                logger.notice(
                    "webhook failed, trying again later",
                    metadata: ["app": "\(parts[2])", "attempt": "\(made + 1)", "reason": "\(reason)"])
            } else {
                try await Parking(publisher: publisher, topology: topology).park(
                    delivery.body, properties: properties, reason: "webhook failed \(made + 1) times: \(reason)",
                    attempts: made + 1, origin: topology.webhooks, to: topology.webhooksParked)
                metrics.webhook("parked")
                logger.warning(
                    "webhook failed every attempt, event parked",
                    metadata: ["app": "\(parts[2])", "attempts": "\(made + 1)", "reason": "\(reason)"])
            }
        } catch {
            // Not moved on: the broker gives it to a consumer again.
            logger.notice("webhook retry could not be queued, handing the event back", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
            return
        }
        try? await consumer.ack(delivery)
    }
}
