import AsyncHTTPClient
import NIOPosix
import ServiceLifecycle

/// Delivers the events of the apps with a webhook (`WebhookConsumer`); in the worker's group only when an app has
/// one. It binds the webhooks queue to the events exchange for each such app (`*.*.<app>`) on start.
struct WebhookService: Service, CustomStringConvertible {
    let shared: WorkerShared
    let webhooks: Webhooks

    var description: String { "WebhookService(\(webhooks))" }

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        // A redirect would carry the signed event somewhere else: the receiver must answer itself.
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5), read: .init(shared.configuration.webhookTimeout))
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
        do {
            try await shared.withConnections(role: "webhooks", consumer: true) { consumer, publisher in
                let topology = shared.configuration.topology
                for app in webhooks.byApp.keys.sorted() {
                    try await consumer!.bindQueue(topology.webhooks, to: topology.events, routingKey: "*.*.\(app)")
                }
                let deliveries = WebhookConsumer(
                    webhooks: webhooks, client: client, topology: topology, publisher: publisher,
                    attempts: shared.configuration.webhookAttempts, timeout: shared.configuration.webhookTimeout,
                    metrics: shared.metrics, logger: shared.logger)
                try await ConsumerLoop.run(
                    queue: topology.webhooks, prefetch: shared.configuration.webhookConcurrency, on: consumer!,
                    logger: shared.logger,
                    accept: { delivery, consumer in { await deliveries.handle(delivery, consumer: consumer) } })
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
