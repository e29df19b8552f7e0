import AsyncHTTPClient
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ

/// Consumes `herald.webhooks` (the events of the apps with a webhook, bound to the events exchange) and POSTs each
/// to its app's webhook. A failure goes to a webhook retry queue, which returns it after its delay (the retry
/// delays of the topology: 1 s, 10 s, 60 s, 600 s by default); after `WorkerConfiguration.webhookAttempts` it is
/// parked in `herald.webhooks.parked` with the last reason. Each is acknowledged only after its next copy is
/// confirmed, so an event is never lost; a receiver may see one twice and deduplicates by `x-herald-delivery`.
///
/// A message is only a doorbell: what is posted and signed is the event the outbox wrote (`webhook_events`, read by
/// the message id), never the message's own body or routing key, so a message published by anyone else is refused
/// unsigned. Each app has a lane of its own (`WebhookLanes`): an event whose lane is full waits in a delay queue
/// (no attempt counted), and one whose endpoint's breaker is open counts a failed attempt without a request.
struct WebhookConsumer: Sendable {
    let webhooks: Webhooks
    let lanes: WebhookLanes
    let store: Store
    let client: HTTPClient
    let topology: Topology
    let publisher: AMQPConnection
    let attempts: Int
    let timeout: Duration
    /// Time for the lanes' breakers and the signatures.
    let clock: HeraldClock
    let metrics: WorkerMetrics
    let logger: Logger

    /// The event's routing key, on the copies that wait in a retry queue or are parked.
    static let eventHeader = "x-herald-event"

    /// The outbox id in a message id `event-<n>`, or nil.
    static func eventID(_ messageID: String?) -> Int64? {
        guard let messageID, messageID.hasPrefix("event-"), messageID.utf8.count <= 26 else { return nil }
        return Int64(messageID.dropFirst(6)).flatMap { $0 > 0 ? $0 : nil }
    }

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        // Attempts made before this one, as the retry copy carries them; bounded, since anyone may publish here.
        let made: Int
        if case .int(let value)? = delivery.properties.headers[ParkingHeader.attempts] {
            made = Int(min(max(value, 0), Int64(attempts)))
        } else {
            made = 0
        }
        var event: WebhookEvent? = nil
        if let id = Self.eventID(delivery.properties.messageID) {
            do {
                event = try await store.webhookEvent(id: id)
            } catch {
                // PostgreSQL does not answer: the event waits in a delay queue, its attempts as they were.
                logger.notice("webhook event cannot be read, trying again later", metadata: ["error": "\(error)"])
                await move(delivery, to: topology.webhookRetryQueue(after: 1), consumer)
                return
            }
        }
        guard let event else {
            // Not an event the outbox wrote for a webhook (a message someone else published), or one already
            // delivered (a second copy): nothing is signed.
            metrics.webhook("refused")
            logger.notice(
                "webhook message refused: no such event in the outbox, nothing signed",
                metadata: ["message_id": "\(String((delivery.properties.messageID ?? "").prefix(40)))"])
            try? await consumer.ack(delivery)
            return
        }
        guard let endpoint = webhooks.byApp[event.app] else {
            // An app whose webhook was removed while its binding stayed: its events are on the events exchange.
            metrics.webhook("dropped")
            try? await consumer.ack(delivery)
            return
        }
        let answer: Webhooks.Answer
        switch lanes.admit(app: event.app, endpoint: endpoint.url, now: clock.now()) {
        case .busy:
            // Its app's lane is full: out of the shared queue's way, back after a delay, no attempt counted.
            metrics.webhook("deferred")
            await move(delivery, to: topology.webhookDelayQueue(for: timeout), consumer)
            return
        case .open:
            answer = .failed("\(endpoint.host): not tried, \(lanes.threshold) failures in a row (circuit open)")
        case .send:
            answer = await Webhooks.post(
                Array(event.body.utf8), event: event.routingKey, id: "event-\(event.id)", attempt: made + 1,
                to: endpoint, client: client, timeout: timeout, signedAt: clock.unixSeconds)
            lanes.finish(app: event.app, endpoint: endpoint.url, delivered: answer == .delivered, now: clock.now())
        }
        guard case .failed(let reason) = answer else {
            metrics.webhook("delivered")
            // A later copy of it (a relay that published twice, a forged doorbell) is no longer signed. If this
            // fails, a copy may be posted again: receivers drop an `x-herald-delivery` they have handled.
            try? await store.forgetWebhookEvent(id: event.id)
            try? await consumer.ack(delivery)
            return
        }
        await failed(delivery, event: event, made: made, reason: reason, consumer)
    }

    /// A failed attempt: to the retry queue of the next attempt, or parked after the last.
    private func failed(
        _ delivery: AMQPDelivery, event: WebhookEvent, made: Int, reason: String, _ consumer: AMQPConsumer
    ) async {
        var properties = delivery.properties
        properties.headers[ParkingHeader.attempts] = .int(Int64(made + 1))
        properties.headers[ParkingHeader.reason] = .string(reason)
        properties.headers[Self.eventHeader] = .string(event.routingKey)
        let body = Array(event.body.utf8)
        do {
            if made + 1 < attempts {
                try await publisher.publish(
                    body, exchange: "", routingKey: topology.webhookRetryQueue(after: made + 1),
                    properties: properties, mandatory: true)
                metrics.webhook("retried")
                logger.notice(
                    "webhook failed, trying again later",
                    metadata: ["app": "\(event.app)", "attempt": "\(made + 1)", "reason": "\(reason)"])
            } else {
                try await Parking(publisher: publisher, topology: topology, clock: clock).park(
                    body, properties: properties, reason: "webhook failed \(made + 1) times: \(reason)",
                    attempts: made + 1, origin: topology.webhooks, to: topology.webhooksParked)
                metrics.webhook("parked")
                logger.warning(
                    "webhook failed every attempt, event parked",
                    metadata: ["app": "\(event.app)", "attempts": "\(made + 1)", "reason": "\(reason)"])
            }
        } catch {
            // Not moved on: the broker gives it to a consumer again.
            logger.notice("webhook retry could not be queued, handing the event back", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
            return
        }
        try? await consumer.ack(delivery)
    }

    /// Moves a message to a delay queue as it is and acknowledges it once the copy is confirmed.
    private func move(_ delivery: AMQPDelivery, to queue: String, _ consumer: AMQPConsumer) async {
        do {
            try await publisher.publish(
                delivery.body, exchange: "", routingKey: queue, properties: delivery.properties, mandatory: true)
        } catch {
            logger.notice("webhook event could not be delayed, handing it back", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
            return
        }
        try? await consumer.ack(delivery)
    }
}
