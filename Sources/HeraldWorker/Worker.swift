import HeraldMessaging
import HeraldOperations
import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RabbitMQ
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Builds a worker: the PostgreSQL pool, one APNs client per app, and the planner, deliverer and scheduler as
/// `Service`s in one `ServiceGroup` (plus the metrics and health server when a port is configured).
///
/// Services stop in reverse order: on SIGTERM the planner and deliverer stop consuming and finish what they hold,
/// then the APNs clients close, then the database pool. `herald worker` runs this; tests call the same function.
public func buildWorker(
    configuration: WorkerConfiguration,
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
    logger: Logger
) throws -> ServiceGroup {
    let postgres = PostgresClient(configuration: configuration.database.clientConfiguration, backgroundLogger: logger)
    let store = Store(
        client: postgres, logger: logger, stalls: configuration.databaseStalls,
        probeConnection: try configuration.database.connectionConfiguration(), clock: configuration.clock,
        metrics: configuration.storeMetrics)
    let clients = try APNSClients(
        apps: configuration.apps,
        directory: configuration.appsDirectory,
        connectionsPerApp: configuration.connectionsPerApp,
        requestTimeout: configuration.requestTimeout,
        eventLoopGroup: eventLoopGroup,
        logger: logger,
        clock: configuration.clock
    )
    let claims = try PlanningClaims(database: configuration.database, logger: logger, clock: configuration.clock)
    let webhooks = try Webhooks(apps: configuration.apps, directory: configuration.appsDirectory)
    let shared = WorkerShared(
        configuration: configuration, store: store, clients: clients, claims: claims, logger: logger,
        eventLoopGroup: eventLoopGroup)
    var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
        .init(service: postgres), .init(service: PlanningClaimsService(claims: claims)),
    ]
    if let port = configuration.operationsPort {
        let state = shared.state
        let readiness = Readiness {
            let database = (try? await store.ping()) != nil
            return ["postgres": database, "amqp": state.allConsuming]
        }
        services.append(
            .init(
                service: OperationsServer(
                    host: configuration.operationsHost,
                    port: port,
                    registry: configuration.metricsRegistry,
                    readiness: readiness,
                    logger: logger
                )
            )
        )
    }
    // Reverse order on shutdown: the planner stops taking jobs first, then the deliverer finishes the batches in
    // hand, then the scheduler, the APNs connections and last the database pool.
    services.append(.init(service: APNSClientsService(clients: clients)))
    if let appsFile = configuration.appsFile {
        // SIGHUP rereads the apps file (`AppsReloader`).
        let reloader = AppsReloader(path: appsFile, clients: clients, logger: logger)
        services.append(.init(service: AppsReloadService(reloader: reloader)))
    }
    services.append(.init(service: SchedulerService(shared: shared)))
    if !webhooks.isEmpty { services.append(.init(service: WebhookService(shared: shared, webhooks: webhooks))) }
    services.append(
        .init(service: DelivererService(shared: shared), successTerminationBehavior: .gracefullyShutdownGroup))
    services.append(
        .init(service: PlannerService(shared: shared), successTerminationBehavior: .gracefullyShutdownGroup))
    return ServiceGroup(
        configuration: .init(
            services: services,
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger
        )
    )
}

/// What the worker's services share: configuration, store, APNs clients, metrics and state.
struct WorkerShared: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let clients: APNSClients
    let claims: PlanningClaims
    let logger: Logger
    /// The event loops the APNs and channel clients run on.
    let eventLoopGroup: any EventLoopGroup
    let metrics = WorkerMetrics()
    let stoppedJobs = StoppedJobs()
    let state = PipelineState()

    /// Runs `body` with a publisher connection (which declares the topology) and, if asked, a consumer connection:
    /// separate so that broker flow control on publishers never stalls acknowledgements.
    func withConnections(
        role: String,
        consumer needsConsumer: Bool,
        _ body: (_ consumer: AMQPConnection?, _ publisher: AMQPConnection) async throws -> Void
    ) async throws {
        // Losing the broker must not stop the worker: both connections reconnect (the default policy unless one is
        // configured), declare the topology again, and consumers resume; what was in hand comes back redelivered.
        var amqp = configuration.amqp
        amqp.reconnect = amqp.reconnect ?? ReconnectPolicy()
        let topology = configuration.topology
        let logger = self.logger
        let declareTopology: AMQPConnection.ConnectHook = { connection in
            for queue in try await topology.declare(on: connection) {
                logger.warning(
                    "queue declared by an earlier Herald, taken as it is (see the upgrade notes in docs/operations.md)",
                    metadata: ["queue": "\(queue)"])
            }
        }
        var publisherConfiguration = amqp
        publisherConfiguration.connectionName = "herald-\(role)-publisher"
        let publisher = try await AMQPConnection.connect(
            publisherConfiguration, logger: logger, onConnect: declareTopology)
        var consumer: AMQPConnection? = nil
        do {
            if needsConsumer {
                // Before the first message: a job finished from then on has its events if its app has them.
                let apps = configuration.apps.apps
                try await OutageWaiter(store: store, logger: logger).untilDone("recording the apps that have events") {
                    try await store.setEventApps(
                        with: apps.filter(\.hasEvents).map(\.id), without: apps.filter { !$0.hasEvents }.map(\.id))
                }
                // The apps whose events the outbox keeps for the webhooks to sign (schemas/028).
                let waiter = OutageWaiter(store: store, logger: logger)
                try await waiter.untilDone("recording the apps that have webhooks") {
                    try await store.setWebhookApps(
                        with: apps.filter { $0.webhook != nil }.map(\.id),
                        without: apps.filter { $0.webhook == nil }.map(\.id))
                }
                var consumerConfiguration = amqp
                consumerConfiguration.connectionName = "herald-\(role)"
                consumer = try await AMQPConnection.connect(
                    consumerConfiguration, logger: logger, onConnect: declareTopology)
            }
            try await body(consumer, publisher)
        } catch {
            await consumer?.close()
            await publisher.close()
            throw error
        }
        await consumer?.close()
        await publisher.close()
    }

    /// The delivery run over `publisher` (retry batches, parked devices and jobs).
    func deliveryRun(publisher: AMQPConnection) -> DeliveryRun {
        DeliveryRun(
            store: store, apps: clients, configuration: configuration,
            commit: Commit(
                store: store, publisher: publisher, configuration: configuration, metrics: metrics, logger: logger,
                stoppedJobs: stoppedJobs),
            metrics: metrics, logger: logger)
    }
}

/// Consumes `herald.jobs`: validates, registers and plans jobs (delivering those of one batch itself).
struct PlannerService: Service {
    let shared: WorkerShared

    func run() async throws {
        try await shared.withConnections(role: "planner", consumer: true) { consumer, publisher in
            let configuration = shared.configuration
            let planner = Planner(
                store: shared.store,
                publisher: AMQPBatchPublisher(connection: publisher, queue: configuration.topology.batches),
                batchSize: configuration.batchSize, throttleWindow: configuration.throttleWindow,
                apps: configuration.apps, liveApps: { [clients = shared.clients] in clients.apps },
                planAhead: configuration.planAhead,
                metrics: shared.metrics, logger: shared.logger, onJobHandled: configuration.onJobHandled,
                clock: configuration.clock
            )
            // Channel clients are made when an app first broadcasts, and shut down with the consumer.
            let broadcastClients = BroadcastClients(eventLoopGroup: shared.eventLoopGroup, logger: shared.logger)
            let liveActivities = LiveActivityStage(
                configuration: configuration, apps: { [clients = shared.clients] in clients.apps }, store: shared.store,
                logger: shared.logger)
            let channelBroadcasts = ChannelBroadcastRun(
                configuration: configuration, store: shared.store,
                sender: ChannelSender(
                    clients: broadcastClients, appsDirectory: configuration.appsDirectory, clock: configuration.clock),
                commit: ChannelCommit(store: shared.store, logger: shared.logger), logger: shared.logger)
            let jobs = JobConsumer(
                configuration: configuration, store: shared.store,
                apps: { [clients = shared.clients] in clients.apps }, planner: planner,
                run: shared.deliveryRun(publisher: publisher),
                parking: Parking(publisher: publisher, topology: configuration.topology, clock: configuration.clock),
                metrics: shared.metrics,
                logger: shared.logger,
                smallJobs: SmallJobQueue(
                    maximumRunners: configuration.smallJobRunners,
                    maximumGroup: configuration.smallJobGroupSize ?? max(1, Int(configuration.prefetch) / 4)),
                claims: shared.claims, liveActivities: liveActivities, channelBroadcasts: channelBroadcasts
            )
            shared.state.started()
            defer { shared.state.stopped() }
            do {
                // The planner's loop runs on the connection's thread: decoding and routing a delivery are short steps,
                // and every batch of single-device jobs would otherwise wake another thread.
                try await ConsumerLoop.run(
                    queue: configuration.topology.jobs, prefetch: configuration.prefetch, on: consumer!,
                    logger: shared.logger, maximumBodySize: configuration.maximumMessageBytes,
                    onConnectionThread: true, accept: jobs.accept
                )
            } catch {
                await broadcastClients.shutdown()
                throw error
            }
            await broadcastClients.shutdown()
        }
    }
}

/// Consumes `herald.batches` (planned batches and retries back from the delay queues) and delivers them.
struct DelivererService: Service {
    let shared: WorkerShared

    func run() async throws {
        try await shared.withConnections(role: "deliverer", consumer: true) { consumer, publisher in
            let configuration = shared.configuration
            let batches = BatchConsumer(
                configuration: configuration, store: shared.store, publisher: publisher,
                run: shared.deliveryRun(publisher: publisher),
                parking: Parking(publisher: publisher, topology: configuration.topology, clock: configuration.clock),
                metrics: shared.metrics,
                logger: shared.logger
            )
            shared.state.started()
            defer { shared.state.stopped() }
            try await ConsumerLoop.run(
                queue: configuration.topology.batches, prefetch: configuration.batchPrefetch, on: consumer!,
                logger: shared.logger, maximumBodySize: configuration.maximumMessageBytes,
                executor: DispatchTaskExecutor(),
                accept: { delivery, consumer in { await batches.handle(delivery, consumer: consumer) } }
            )
        }
    }
}

/// Releases scheduled jobs when they are due, and runs retention.
struct SchedulerService: Service {
    let shared: WorkerShared

    func run() async throws {
        try await shared.withConnections(role: "scheduler", consumer: false) { _, publisher in
            let scheduler = Scheduler(
                store: shared.store, configuration: shared.configuration, publisher: publisher,
                metrics: shared.metrics, logger: shared.logger
            )
            let retention = Retention(
                store: shared.store, configuration: shared.configuration,
                parked: ParkedMessages(connection: publisher, topology: shared.configuration.topology),
                metrics: shared.metrics, logger: shared.logger)
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await scheduler.run() }
                group.addTask { await retention.run() }
            }
        }
    }
}

/// Keeps the APNs clients open while the group runs, shuts down the clients a reload replaced once their work is
/// done, and shuts every client down after the pipeline has drained.
struct APNSClientsService: Service {
    let clients: APNSClients

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await replaced in clients.retirements {
                    for app in replaced { await app.shutdown() }
                }
            }
            try? await gracefulShutdown()
            // Ends the retirements: replaced clients still leased are shut down with the rest.
            await clients.shutdown()
        }
    }
}

/// Keeps the planning claims' connection while the group runs and closes it once the planner has drained.
struct PlanningClaimsService: Service {
    let claims: PlanningClaims

    func run() async throws {
        try? await gracefulShutdown()
        await claims.close()
    }
}

/// How many of the worker's two consumers (jobs, batches) are running, for the readiness check.
final class PipelineState: Sendable {
    private let consumers = Atomic(0)

    var allConsuming: Bool { consumers.load(ordering: .relaxed) == 2 }

    func started() { consumers.add(1, ordering: .relaxed) }

    func stopped() { consumers.subtract(1, ordering: .relaxed) }
}
