import Foundation
import HeraldCore
import HeraldMessaging
import HeraldTestSupport
import HeraldWorker
import Logging
import RabbitMQ
import Testing

/// Webhooks per app and from the outbox only: a slow endpoint beside a fast one, a circuit breaker that opens, and
/// messages published to the broker by someone other than the outbox's relay, which are never signed.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct WebhookIsolationTests {
    static let slowSecret = "the-slow-apps-webhook-secret"
    static let fastSecret = "the-fast-apps-webhook-secret"

    /// An app's webhook at `port`, its secret in `file` beside the apps file; the test CA signs the receiver.
    static func webhook(_ harness: WorkerHarness, port: Int, secret: String, file: String) throws
        -> AppConfiguration.Webhook
    {
        try (secret + "\n").write(toFile: harness.appsDirectory + "/" + file, atomically: true, encoding: .utf8)
        return .init(url: "https://127.0.0.1:\(port)/hook", secretFile: file, caFile: "ca.pem")
    }

    static func set(_ webhook: AppConfiguration.Webhook, for app: String, in configuration: inout WorkerConfiguration) {
        let index = configuration.apps.apps.firstIndex { $0.id == app }!
        configuration.apps.apps[index].webhook = webhook
    }

    /// What the worker does at start, done first here so that the events written next are kept for the webhooks
    /// and routed to the webhooks queue whatever the worker has done yet.
    static func prepare(_ harness: WorkerHarness, apps: [String]) async throws {
        try await harness.store.setWebhookApps(with: apps, without: [])
        for app in apps {
            try await harness.publisher.bindQueue(
                harness.topology.webhooks, to: harness.topology.events, routingKey: "*.*.\(app)")
        }
    }

    /// Writes `count` `job.finished` events of `app` to the outbox, as the jobs' triggers do, in one statement.
    static func writeEvents(_ harness: WorkerHarness, app: String, count: Int, tag: String) async throws {
        try await harness.store.client.query(
            """
            INSERT INTO event_outbox (routing_key, body)
            SELECT 'job.finished.' || \(app), jsonb_build_object(
                'event', 'job.finished', 'app', \(app)::text, 'job', \(tag) || '-' || n, 'state', 'done')
            FROM generate_series(1, \(count)) AS n
            """,
            logger: harness.logger)
    }

    static func deliveries(_ requests: [WebhookReceiver.Request], _ label: String) -> Set<String> {
        Set(requests.filter { $0.label == label }.compactMap { $0.headers["x-herald-delivery"] })
    }

    /// Twelve events of an app whose endpoint answers nothing until released, then four of an app whose endpoint
    /// answers at once: the fast app's four all arrive while the slow endpoint holds its lane's two requests, and
    /// no more of the slow app's reached it. Without lanes, the slow app's events would fill every slot first.
    @Test func aSlowEndpointNeverDelaysAnotherAppsWebhooks() async throws {
        let arrivals = EventCollector<WebhookReceiver.Request>()
        try await WebhookReceiver.with(hold: true, label: "slow", requests: arrivals) { slow, slowPort in
            try await WebhookReceiver.with(label: "fast", requests: arrivals) { _, fastPort in
                try await WorkerHarness.with { harness in
                    let slowHook = try Self.webhook(harness, port: slowPort, secret: Self.slowSecret, file: "slow")
                    let fastHook = try Self.webhook(harness, port: fastPort, secret: Self.fastSecret, file: "fast")
                    let worker = try harness.startWorker { configuration in
                        configuration.webhookConcurrency = 4
                        configuration.webhookConcurrencyPerApp = 2
                        configuration.webhookTimeout = .seconds(600)  // held requests never time out here
                        Self.set(slowHook, for: WorkerHarness.app, in: &configuration)
                        Self.set(fastHook, for: WorkerHarness.otherApp, in: &configuration)
                    }
                    try await Self.prepare(harness, apps: [WorkerHarness.app, WorkerHarness.otherApp])
                    // The slow app's events first: they are ahead of the fast app's in the queue.
                    try await Self.writeEvents(harness, app: WorkerHarness.app, count: 12, tag: "slow")
                    try await Self.writeEvents(harness, app: WorkerHarness.otherApp, count: 4, tag: "fast")

                    let seen = await arrivals.wait {
                        Self.deliveries($0, "fast").count == 4 || $0.filter { $0.label == "slow" }.count > 2
                    }
                    #expect(Self.deliveries(seen, "fast").count == 4)
                    #expect(seen.filter { $0.label == "slow" }.count == 2)
                    let now = Int64(Date().timeIntervalSince1970)
                    for request in seen where request.label == "fast" {
                        let signature = request.headers[WebhookSignature.header] ?? ""
                        #expect(
                            WebhookSignature.verify(
                                signature, body: request.body, secret: Array(Self.fastSecret.utf8), now: now))
                    }

                    // Released, the slow endpoint gets every one of its events in the end: none was lost.
                    slow.release()
                    let all = await arrivals.wait { Self.deliveries($0, "slow").count == 12 }
                    #expect(Self.deliveries(all, "slow").count == 12)
                    try await worker.stop()
                }
            }
        }
    }

    /// An endpoint that fails every request: after the threshold of failures in a row its breaker opens, and the
    /// later events are not posted (each counts a failed attempt without a request, here the only one).
    @Test func anEndpointsBreakerOpensAfterItsFailuresInARow() async throws {
        try await WebhookReceiver.with(always: .serviceUnavailable) { receiver, port in
            try await WorkerHarness.with { harness in
                let hook = try Self.webhook(harness, port: port, secret: Self.slowSecret, file: "secret")
                let worker = try harness.startWorker { configuration in
                    configuration.webhookAttempts = 1
                    configuration.webhookConcurrencyPerApp = 1
                    configuration.webhookBreakerThreshold = 2
                    configuration.webhookBreakerOpenFor = .seconds(3600)
                    Self.set(hook, for: WorkerHarness.app, in: &configuration)
                }
                try await Self.prepare(harness, apps: [WorkerHarness.app])
                try await Self.writeEvents(harness, app: WorkerHarness.app, count: 4, tag: "refused")

                let parked = try await harness.publisher.consume(queue: harness.topology.webhooksParked, prefetch: 4)
                var iterator = parked.makeAsyncIterator()
                var reasons: [String] = []
                for _ in 0..<4 {
                    let delivery = try #require(try await iterator.next())
                    try await parked.ack(delivery)
                    if case .string(let reason)? = delivery.properties.headers[ParkingHeader.reason] {
                        reasons.append(reason)
                    }
                }
                try await parked.cancel()
                #expect(receiver.requests.events.count == 2)
                #expect(reasons.filter { $0 == "webhook failed 1 times: 127.0.0.1 answered 503" }.count == 2)
                #expect(
                    reasons.filter {
                        $0 == "webhook failed 1 times: 127.0.0.1: not tried, 2 failures in a row (circuit open)"
                    }.count == 2)
                try await worker.stop()
            }
        }
    }

    /// Messages that did not come from the outbox: an event published to the events exchange, a message published
    /// straight to the webhooks queue, and a copy of a delivered event's message id with another body. None is
    /// posted; the events the outbox wrote are, signed, each once. One event at a time (a prefetch of one), so
    /// each forged message is handled before the genuine event behind it arrives.
    @Test func aMessageTheOutboxDidNotWriteIsNeverSignedOrPosted() async throws {
        try await WebhookReceiver.with { receiver, port in
            try await WorkerHarness.with { harness in
                let hook = try Self.webhook(harness, port: port, secret: Self.slowSecret, file: "secret")
                let worker = try harness.startWorker { configuration in
                    configuration.webhookConcurrency = 0
                    configuration.webhookConcurrencyPerApp = 1
                    Self.set(hook, for: WorkerHarness.app, in: &configuration)
                }
                try await Self.prepare(harness, apps: [WorkerHarness.app])
                let forged = Array(#"{"event":"job.finished","app":"com.example.news","job":"forged"}"#.utf8)
                try await harness.publisher.publish(
                    forged, exchange: harness.topology.events, routingKey: "job.finished.\(WorkerHarness.app)",
                    properties: AMQPProperties(messageID: "event-987654321"), mandatory: true)
                try await harness.publisher.publish(
                    forged, routingKey: harness.topology.webhooks, properties: AMQPProperties(), mandatory: true)
                try await Self.writeEvents(harness, app: WorkerHarness.app, count: 1, tag: "genuine")

                let first = await receiver.requests.wait { !$0.isEmpty }
                #expect(first.count == 1)
                let genuine = try #require(first.first)
                let id = try #require(genuine.headers["x-herald-delivery"])
                #expect(String(decoding: genuine.body, as: UTF8.self).contains("genuine-1"))
                let signature = genuine.headers[WebhookSignature.header] ?? ""
                #expect(
                    WebhookSignature.verify(
                        signature, body: genuine.body, secret: Array(Self.slowSecret.utf8),
                        now: Int64(Date().timeIntervalSince1970)))

                // The delivered event's own message id, with a forged body: its row is gone, nothing is signed.
                try await harness.publisher.publish(
                    forged, exchange: harness.topology.events, routingKey: "job.finished.\(WorkerHarness.app)",
                    properties: AMQPProperties(messageID: id), mandatory: true)
                try await Self.writeEvents(harness, app: WorkerHarness.app, count: 1, tag: "second")
                let all = await receiver.requests.wait { $0.count >= 2 }
                #expect(all.count == 2)
                #expect(String(decoding: all[1].body, as: UTF8.self).contains("second-1"))
                #expect(!all.contains { String(decoding: $0.body, as: UTF8.self).contains("forged") })
                try await worker.stop()
            }
        }
    }
}
