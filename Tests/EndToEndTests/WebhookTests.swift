import Foundation
import HeraldCore
import HeraldMessaging
import HeraldTestSupport
import HeraldWorker
import RabbitMQ
import Testing

/// Webhooks: an app's events POSTed to its HTTPS endpoint, signed with its secret, tried again after a failure and
/// parked in `herald.webhooks.parked` when every attempt failed.
@Suite(.needsServices, .timeLimit(.minutes(3))) struct WebhookTests {
    static let secret = "a-webhook-secret-of-the-test"

    /// The apps file's webhook for the harness's app, with its secret written beside the apps file.
    static func webhook(_ harness: WorkerHarness, port: Int, caFile: String?) throws -> AppConfiguration.Webhook {
        try (secret + "\n").write(toFile: harness.appsDirectory + "/webhook-secret", atomically: true, encoding: .utf8)
        return .init(url: "https://127.0.0.1:\(port)/hook", secretFile: "webhook-secret", caFile: caFile)
    }

    @Test func aFinishedJobsEventIsPostedSignedAndTriedAgainAfterAFailure() async throws {
        try await WebhookReceiver.with(answers: [.serviceUnavailable]) { receiver, port in
            try await WorkerHarness.with { harness in
                let devices = try await harness.importDevices(count: 3)
                let webhook = try Self.webhook(harness, port: port, caFile: "ca.pem")
                let worker = try harness.startWorker { configuration in
                    let index = configuration.apps.apps.firstIndex { $0.id == WorkerHarness.app }!
                    configuration.apps.apps[index].webhook = webhook
                }
                try await harness.publish(WorkerHarness.broadcast(id: "hooked"))
                #expect(await harness.waitUntilFinished("hooked") == .done)

                // Refused once (503), then delivered from the retry queue: the same event, attempt 2.
                let requests = await receiver.requests.wait { $0.count == 2 }
                #expect(requests.map { $0.headers["x-herald-attempt"] } == ["1", "2"])
                let delivered = requests[1]
                #expect(delivered.body == requests[0].body)
                #expect(delivered.headers["x-herald-event"] == "job.finished.\(WorkerHarness.app)")
                #expect(delivered.headers["x-herald-delivery"]?.hasPrefix("event-") == true)
                let signature = try #require(delivered.headers[WebhookSignature.header])
                let now = Int64(Date().timeIntervalSince1970)
                #expect(
                    WebhookSignature.verify(signature, body: delivered.body, secret: Array(Self.secret.utf8), now: now))
                #expect(
                    !WebhookSignature.verify(signature, body: delivered.body, secret: Array("other".utf8), now: now))
                #expect(
                    !WebhookSignature.verify(
                        signature, body: delivered.body + [0x20], secret: Array(Self.secret.utf8), now: now))
                let event = try #require(
                    try JSONSerialization.jsonObject(with: Data(delivered.body)) as? [String: Any])
                #expect(event["job"] as? String == "hooked")
                #expect(event["sent"] as? Int == devices.count)
                try await worker.stop()
            }
        }
    }

    /// Without the CA that signed the endpoint's certificate the request fails (verification is never off); after
    /// its attempts the event is parked with the reason.
    @Test func anEventWhoseWebhookKeepsFailingIsParkedWithTheReason() async throws {
        try await WebhookReceiver.with { receiver, port in
            try await WorkerHarness.with { harness in
                try await harness.importDevices(count: 1)
                let webhook = try Self.webhook(harness, port: port, caFile: nil)
                let worker = try harness.startWorker { configuration in
                    configuration.webhookAttempts = 2
                    configuration.webhookTimeout = .seconds(2)
                    let index = configuration.apps.apps.firstIndex { $0.id == WorkerHarness.app }!
                    configuration.apps.apps[index].webhook = webhook
                }
                try await harness.publish(WorkerHarness.broadcast(id: "unhooked"))
                #expect(await harness.waitUntilFinished("unhooked") == .done)

                let parked = try await harness.publisher.consume(queue: harness.topology.webhooksParked, prefetch: 1)
                var iterator = parked.makeAsyncIterator()
                let delivery = try #require(try await iterator.next())
                try await parked.ack(delivery)
                guard case .string(let reason)? = delivery.properties.headers[ParkingHeader.reason] else {
                    Issue.record("parked without a reason")
                    return
                }
                #expect(reason == "webhook failed 2 times: 127.0.0.1: TLS failed")
                #expect(delivery.properties.headers[ParkingHeader.attempts] == .int(2))
                #expect(delivery.routingKey == harness.topology.webhooksParked)
                #expect(receiver.requests.events.isEmpty)
                try await parked.cancel()
                try await worker.stop()
            }
        }
    }
}
