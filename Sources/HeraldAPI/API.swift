import HeraldMessaging
import HeraldOperations
import HeraldProducer
import HeraldStore
import Hummingbird
import Logging
import NIOCore
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

    /// How soon a request whose statement meets a database outage gives up (503, `Retry-After`): a client waits
    /// well under a second, where the worker's statements wait out a short outage (`StallPolicy()`).
    public static let databaseStalls = StallPolicy(checkInterval: .milliseconds(200), grace: .milliseconds(400))

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
                // Each check on its own and at once, within a second or two: a database that is down must neither
                // hold the answer for the pool's retries nor make the broker look down. The broker's check is the
                // open connection's state, or a first connection (with its queue declarations) if there is none.
                async let database = store.databaseAnswers(within: .seconds(1))
                async let broker = producer.answers(within: .seconds(2))
                return ["postgres": await database, "amqp": await broker]
            }
        )
        var v1 = router.group("v1").add(
            middleware: APIKeyAuthenticator(
                store: store, limiter: limiter,
                registerRequestsPerSecond: configuration.registerRequestsPerSecond, clock: configuration.clock))
        if let apps = configuration.apps { v1 = v1.add(middleware: KnownAppMiddleware(apps: apps)) }
        DeviceRoutes(api: self).add(to: v1)
        ActivityTokenRoutes(api: self).add(to: v1)
        NotificationRoutes(api: self).add(to: v1)
        JobRoutes(api: self).add(to: v1)
        ReportRoutes(api: self).add(to: v1)
        ChannelRoutes(api: self).add(to: v1)
        allowed.record(router.routes.map { (path: $0.path.description, method: $0.method.rawValue) })
        return router
    }

    /// The Hummingbird application serving the router on the configured host and port; a connection with no
    /// request in progress for `idleTimeout` is closed. `onServerRunning` hears of the listening channel (its port).
    public func makeApplication(
        logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let (seconds, attoseconds) = configuration.idleTimeout.components
        let idle = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return Application(
            router: makeRouter(),
            server: .http1(configuration: .init(idleTimeout: idle)),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    /// The producer configuration for the topology: publishes through its jobs exchange to its jobs queue, and
    /// declares those two (and their binding) on connect: all the API's broker user may configure or write to.
    public static func producerConfiguration(_ configuration: APIConfiguration) -> ProducerConfiguration {
        var producer = ProducerConfiguration(amqp: configuration.amqp, queue: configuration.topology.jobs)
        producer.exchange = configuration.topology.jobs
        producer.amqp.connectionName = producer.amqp.connectionName ?? "herald-api"
        let topology = configuration.topology
        producer.prepareConnection = { connection in try await topology.declareJobs(on: connection) }
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
        client: postgres, logger: logger, stalls: API.databaseStalls,
        probeConnection: try? configuration.database.connectionConfiguration())
    let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
    let api = API(configuration: configuration, store: store, producer: producer)
    return ServiceGroup(
        configuration: .init(
            services: [
                .init(service: postgres),
                .init(service: HangUpService(logger: logger)),
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
