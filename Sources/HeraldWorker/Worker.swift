import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// Builds a worker: the PostgreSQL pool, one APNs client per app and the job consumer, as one `ServiceGroup`.
///
/// Services stop in reverse order, so on SIGTERM the consumer drains first and the database pool goes last.
/// `herald worker` runs this; tests call the same function.
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
    let consumer = JobConsumer(configuration: configuration, store: store, clients: clients, logger: logger)
    return ServiceGroup(
        configuration: .init(
            services: [
                .init(service: postgres),
                .init(service: APNSClientsService(clients: clients)),
                .init(service: consumer, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger
        )
    )
}

/// Keeps the APNs clients open while the group runs and shuts them down after the consumer has drained.
struct APNSClientsService: Service {
    let clients: APNSClients

    func run() async throws {
        try? await gracefulShutdown()
        await clients.shutdown()
    }
}
