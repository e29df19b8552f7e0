import HeraldMessaging
import HeraldOperations
import HeraldProducer
import HeraldStore
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// The HTTP API's routes over a store and a producer. `herald api` runs it through `buildAPI`; tests build the
/// router or the application directly.
public struct API: Sendable {
    public let configuration: APIConfiguration
    public let store: Store
    public let producer: Producer
    /// The API keys' rate limits in this process.
    let limiter = KeyRateLimiter()

    public init(configuration: APIConfiguration, store: Store, producer: Producer) {
        self.configuration = configuration
        self.store = store
        self.producer = producer
    }

    /// The router with every route: `/v1/…` behind API keys, `/metrics` and `/health/…` open.
    public func makeRouter() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        let allowed = AllowedMethods()
        router.add(middleware: ErrorMiddleware(allowed: allowed))
        router.add(middleware: APIMetricsMiddleware())
        let store = self.store
        let producer = self.producer
        OperationsRoutes.add(
            to: router,
            registry: configuration.metricsRegistry,
            readiness: Readiness {
                let database = (try? await store.ping()) != nil
                let broker = (try? await producer.connect()) != nil
                return ["postgres": database, "amqp": broker]
            }
        )
        let v1 = router.group("v1").add(middleware: APIKeyAuthenticator(store: store, limiter: limiter))
        DeviceRoutes(api: self).add(to: v1)
        ActivityTokenRoutes(api: self).add(to: v1)
        NotificationRoutes(api: self).add(to: v1)
        JobRoutes(api: self).add(to: v1)
        ReportRoutes(api: self).add(to: v1)
        ChannelRoutes(api: self).add(to: v1)
        allowed.record(router.routes.map { (path: $0.path.description, method: $0.method.rawValue) })
        return router
    }

    /// The Hummingbird application serving the router on the configured host and port.
    public func makeApplication(logger: Logger) -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
            logger: logger
        )
    }

    /// The producer configuration for the topology: publishes to its jobs queue and declares it on connect.
    public static func producerConfiguration(_ configuration: APIConfiguration) -> ProducerConfiguration {
        var producer = ProducerConfiguration(amqp: configuration.amqp, queue: configuration.topology.jobs)
        producer.amqp.connectionName = producer.amqp.connectionName ?? "herald-api"
        let topology = configuration.topology
        producer.prepareConnection = { connection in _ = try await topology.declare(on: connection) }
        return producer
    }
}

/// Builds `herald api`: the PostgreSQL pool, the producer and the HTTP server as one `ServiceGroup`. On SIGTERM the
/// server stops taking requests first, then the producer closes, then the pool.
public func buildAPI(
    configuration: APIConfiguration,
    gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
    logger: Logger
) -> ServiceGroup {
    let postgres = PostgresClient(configuration: configuration.database.clientConfiguration, backgroundLogger: logger)
    let store = Store(
        client: postgres, logger: logger, probeConnection: try? configuration.database.connectionConfiguration())
    let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
    let api = API(configuration: configuration, store: store, producer: producer)
    return ServiceGroup(
        configuration: .init(
            services: [
                .init(service: postgres),
                .init(service: ProducerService(producer: producer)),
                .init(
                    service: api.makeApplication(logger: logger), successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger
        )
    )
}

/// Keeps the producer open while the group runs and closes its connection after the server has stopped.
public struct ProducerService: Service {
    let producer: Producer

    public init(producer: Producer) { self.producer = producer }

    public func run() async throws {
        try? await gracefulShutdown()
        await producer.close()
    }
}
