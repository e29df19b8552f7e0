import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RabbitMQ
import ServiceLifecycle
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
    let pipeline = Pipeline(configuration: configuration, store: store, clients: clients, logger: logger)
    return ServiceGroup(
        configuration: .init(
            services: [
                .init(service: postgres),
                .init(service: APNSClientsService(clients: clients)),
                .init(service: pipeline, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
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
    let logger: Logger

    func run() async throws {
        let metrics = WorkerMetrics()
        var publisherConfiguration = configuration.amqp
        publisherConfiguration.connectionName = (configuration.amqp.connectionName ?? "herald-worker") + "-publisher"
        let publisher = try await AMQPConnection.connect(publisherConfiguration, logger: logger)
        let consumerConnection: AMQPConnection
        do {
            try await configuration.topology.declare(on: publisher)
            consumerConnection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
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
