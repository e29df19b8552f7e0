import HeraldAPI
import HeraldMessaging
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import Logging
import NIOCore
import NIOPosix
import RabbitMQ
import ServiceLifecycle
import Testing

/// The API's HTTP server over a real socket: what the router tests (no sockets) cannot see.
@Suite(.needsServices, .timeLimit(.minutes(1))) struct APIServerTests {
    /// A client that opens a connection and sends nothing has it closed by the server after the idle timeout; without
    /// one it would hold a file descriptor for ever (and this test would run into its time limit).
    @Test func anIdleConnectionIsClosedByTheServer() async throws {
        let logger = Logger(label: "test.api.server")
        try await TemporaryDatabase.withMigratedStore { store, database in
            var configuration = APIConfiguration(
                amqp: try AMQPConfiguration(url: TestServices.amqpURL), database: database)
            configuration.topology = Topology(prefix: TestServices.uniqueName("api-idle"))
            configuration.port = 0
            configuration.idleTimeout = .seconds(1)
            let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
            let api = API(configuration: configuration, store: store, producer: producer)
            let port = AsyncStream<Int>.makeStream()
            let application = api.makeApplication(logger: logger) { channel in
                port.continuation.yield(channel.localAddress?.port ?? 0)
                port.continuation.finish()
            }
            let group = ServiceGroup(
                configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
            let running = Task { try await group.run() }
            var ports = port.stream.makeAsyncIterator()
            let bound = try #require(await ports.next())

            let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: bound).get()
            // Nothing is sent: the server closes the connection, which the client sees as its channel closing.
            try await client.closeFuture.get()
            #expect(!client.isActive)

            await group.triggerGracefulShutdown()
            _ = try? await running.value
            await producer.close()
        }
    }
}
