import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RabbitMQ
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Builds a worker: the PostgreSQL pool, one APNs client per app, and the pipeline (planner, deliverer, scheduler)
/// as one `ServiceGroup`.
///
/// Services stop in reverse order: on SIGTERM the pipeline stops consuming and finishes the batches in hand, then
/// the APNs clients close, then the database pool. `herald worker` runs this; tests call the same function.
public func buildWorker(
    configuration: WorkerConfiguration,
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
    logger: Logger
) throws -> ServiceGroup {
    let postgres = PostgresClient(configuration: configuration.database.clientConfiguration, backgroundLogger: logger)
    let store = Store(client: postgres, logger: logger)
    let clients = try APNSClients(
        apps: configuration.apps,
        directory: configuration.appsDirectory,
        connectionsPerApp: configuration.connectionsPerApp,
        requestTimeout: configuration.requestTimeout,
        eventLoopGroup: eventLoopGroup,
        logger: logger
    )
    let state = PipelineState()
    let pipeline = Pipeline(configuration: configuration, store: store, clients: clients, state: state, logger: logger)
    var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: postgres)]
    if let port = configuration.operationsPort {
        let readiness = Readiness {
            let database = (try? await store.ping()) != nil
            return ["postgres": database, "amqp": state.isConsuming]
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
    services.append(.init(service: APNSClientsService(clients: clients)))
    services.append(.init(service: pipeline, successTerminationBehavior: .gracefullyShutdownGroup))
    return ServiceGroup(
        configuration: .init(
            services: services,
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger
        )
    )
}

/// The worker's AMQP side: one connection for consuming (jobs and batches), one for publishing (batches, retries,
/// parked messages, released schedules) so that broker flow control on publishers never stalls acks.
struct Pipeline: Service {
    let configuration: WorkerConfiguration
    let store: Store
    let clients: APNSClients
    let state: PipelineState
    let logger: Logger

    func run() async throws {
        let metrics = WorkerMetrics()
        // Losing the broker must not stop the worker: both connections reconnect (the default policy unless one is
        // configured), redeclare the topology, and the consumers resume; what was in hand comes back redelivered.
        var consumerConfiguration = configuration.amqp
        consumerConfiguration.reconnect = consumerConfiguration.reconnect ?? ReconnectPolicy()
        var publisherConfiguration = consumerConfiguration
        publisherConfiguration.connectionName = (configuration.amqp.connectionName ?? "herald-worker") + "-publisher"
        let topology = configuration.topology
        let declareTopology: AMQPConnection.ConnectHook = { try await topology.declare(on: $0) }
        let publisher = try await AMQPConnection.connect(publisherConfiguration, logger: logger, onConnect: declareTopology)
        let consumerConnection: AMQPConnection
        do {
            consumerConnection = try await AMQPConnection.connect(
                consumerConfiguration, logger: logger, onConnect: declareTopology)
        } catch {
            await publisher.close()
            throw error
        }

        let parking = Parking(publisher: publisher, topology: configuration.topology)
        let deliverer = BatchDeliverer(
            store: store, clients: clients, configuration: configuration, publisher: publisher, metrics: metrics,
            logger: logger
        )
        let planner = Planner(
            store: store, configuration: configuration, publisher: publisher, deliverer: deliverer, metrics: metrics,
            logger: logger
        )
        let jobs = JobConsumer(
            configuration: configuration, store: store, planner: planner, parking: parking, metrics: metrics, logger: logger
        )
        let batches = BatchConsumer(
            configuration: configuration, deliverer: deliverer, parking: parking, metrics: metrics, logger: logger
        )
        let scheduler = Scheduler(store: store, configuration: configuration, publisher: publisher, metrics: metrics, logger: logger)

        state.setConsuming(true)
        defer { state.setConsuming(false) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await ConsumerLoop.run(
                        queue: configuration.topology.jobs, prefetch: configuration.prefetch, on: consumerConnection,
                        logger: logger, handle: jobs.handle
                    )
                }
                group.addTask {
                    try await ConsumerLoop.run(
                        queue: configuration.topology.batches, prefetch: configuration.batchPrefetch,
                        on: consumerConnection, logger: logger, handle: batches.handle
                    )
                }
                group.addTask { try await scheduler.run() }
                try await group.waitForAll()
            }
        } catch {
            await consumerConnection.close()
            await publisher.close()
            throw error
        }
        await consumerConnection.close()
        await publisher.close()
    }
}

/// Keeps the APNs clients open while the group runs and shuts them down after the pipeline has drained.
struct APNSClientsService: Service {
    let clients: APNSClients

    func run() async throws {
        try? await gracefulShutdown()
        await clients.shutdown()
    }
}

/// Whether the pipeline is consuming, for the readiness check.
final class PipelineState: Sendable {
    private let consuming = Atomic(false)

    var isConsuming: Bool { consuming.load(ordering: .relaxed) }

    func setConsuming(_ value: Bool) { consuming.store(value, ordering: .relaxed) }
}
