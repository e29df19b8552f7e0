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
                let configuration = shared.configuration
                let lanes = WebhookLanes(
                    concurrency: configuration.webhookConcurrencyPerApp,
                    threshold: configuration.webhookBreakerThreshold, openFor: configuration.webhookBreakerOpenFor)
                let deliveries = WebhookConsumer(
                    webhooks: webhooks, lanes: lanes, store: shared.store, client: client, topology: topology,
                    publisher: publisher, attempts: configuration.webhookAttempts,
                    timeout: configuration.webhookTimeout, clock: configuration.clock, metrics: shared.metrics,
                    logger: shared.logger)
                // Room for every app's lane full and `webhookConcurrency` more: a slow endpoint never takes the
                // slots the other apps' events need.
                let prefetch = min(
                    Int(UInt16.max),
                    Int(configuration.webhookConcurrency) + lanes.concurrency * webhooks.byApp.count)
                try await ConsumerLoop.run(
                    queue: topology.webhooks, prefetch: UInt16(prefetch), on: consumer!,
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
