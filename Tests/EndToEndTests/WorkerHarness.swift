import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Logging
import RabbitMQ
import ServiceLifecycle

/// One end-to-end scenario: a fresh database, a simulator, a unique queue prefix, workers run in-process exactly as
/// `herald worker` builds them, and a publisher connection.
final class WorkerHarness: Sendable {
    static let app = "com.example.news"
    /// A second app, for the tests of job ids scoped by app.
    static let otherApp = "com.example.sports"

    let store: Store
    let database: DatabaseConfiguration
    let simulator: APNSSimulator
    let port: Int
    let apps: AppsFile
    let appsDirectory: String
    let topology: Topology
    let publisher: AMQPConnection
    let events = EventCollector<JobEvent>()
    /// What the worker logged (info and above), for the tests of what it logs and never logs.
    let logs = LogRecorder()
    let logger: Logger

    private init(
        store: Store, database: DatabaseConfiguration, simulator: APNSSimulator, port: Int, publisher: AMQPConnection,
        topology: Topology
    ) throws {
        self.store = store
        self.database = database
        self.simulator = simulator
        self.port = port
        (self.apps, self.appsDirectory) = try TestAPNs.appsFile(apps: [Self.app, Self.otherApp], port: port)
        self.topology = topology
        self.publisher = publisher
        let logs = self.logs
        var logger = Logger(label: "e2e") { label in
            MultiplexLogHandler([StreamLogHandler.standardError(label: label), logs.handler()])
        }
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_DEBUG"] != nil ? .debug : .info
        self.logger = logger
    }

    /// Runs `body` with a harness and cleans up (queues, simulator, database) afterwards.
    static func with(
        retryDelays: [Duration] = [.milliseconds(300), .milliseconds(300), .milliseconds(300)],
        queueType: Topology.QueueType = .classic,
        deliveryLimit: Int = 20,
        simulator configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        _ body: (WorkerHarness) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let (simulator, port) = try await TestAPNs.startSimulator(configure)
            let publisher = try await AMQPConnection.connect(
                try AMQPConfiguration(url: TestServices.amqpURL), logger: Logger(label: "e2e"))
            let topology = Topology(
                prefix: TestServices.uniqueName("e2e"), queueType: queueType, retryDelays: retryDelays,
                deliveryLimit: deliveryLimit)
            try await topology.declare(on: publisher)
            let harness = try WorkerHarness(
                store: store, database: database, simulator: simulator, port: port, publisher: publisher,
                topology: topology)
            do {
                try await body(harness)
            } catch {
                await harness.cleanUp()
                throw error
            }
            await harness.cleanUp()
        }
    }

    private func cleanUp() async {
        // A `herald worker` process (`startWorkerProcess`) declares the retry queues of the default delays as well.
        for declared in [topology, Topology(prefix: topology.prefix, queueType: topology.queueType)] {
            try? await declared.delete(on: publisher)
        }
        await publisher.close()
        try? await simulator.stop()
        try? FileManager.default.removeItem(atPath: appsDirectory)
    }

    /// A worker configuration for this scenario.
    func configuration(_ adjust: (inout WorkerConfiguration) -> Void = { _ in }) throws -> WorkerConfiguration {
        var configuration = WorkerConfiguration(
            amqp: try AMQPConfiguration(url: TestServices.amqpURL),
            database: database,
            apps: apps,
            appsDirectory: appsDirectory
        )
        configuration.topology = topology
        let events = self.events
        configuration.onJobHandled = { events.record($0) }
        adjust(&configuration)
        return configuration
    }

    /// Starts a worker; stop it with `stop(_:)`.
    func startWorker(_ adjust: (inout WorkerConfiguration) -> Void = { _ in }) throws -> RunningWorker {
        let group = try buildWorker(
            configuration: try configuration(adjust), gracefulShutdownSignals: [], logger: logger)
        return RunningWorker(group: group, task: Task { try await group.run() })
    }

    /// Imports `count` devices: tokens `<prefix><n>` padded to 64 hex digits.
    @discardableResult
    func importDevices(
        count: Int,
        prefix: String = "beef",
        app: String = WorkerHarness.app,
        make: (Int, DeviceToken) -> DeviceRecord = { _, token in DeviceRecord(token: token) }
    ) async throws -> [DeviceRecord] {
        let devices = (0..<count).map { i in make(i, Self.token(i, prefix: prefix)) }
        var index = 0
        while index < devices.count {
            let slice = Array(devices[index..<min(index + 10_000, devices.count)])
            _ = try await store.importDevices(slice, app: app)
            index += slice.count
        }
        return devices
    }

    /// Now, in the simulator's records' unit (`APNSSimulatorRecord.receivedAt`: milliseconds since 1970).
    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func token(_ n: Int, prefix: String = "beef") -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: prefix + String(repeating: "0", count: 64 - prefix.count - hex.count) + hex)
    }

    /// Publishes a job with confirm, at its broker priority as the producer library sets it.
    func publish(_ job: Job) async throws {
        try await publisher.publish(
            Array(try JSONEncoder().encode(job)),
            routingKey: topology.jobs,
            properties: AMQPProperties(
                contentType: "application/json", messageID: job.id, priority: job.brokerPriority(bulk: false))
        )
    }

    /// Publishes a message body as it is, with `properties`, to the jobs queue (or `queue`), with confirm.
    func publishRaw(_ body: [UInt8], properties: AMQPProperties = AMQPProperties(), to queue: String? = nil)
        async throws
    {
        try await publisher.publish(body, routingKey: queue ?? topology.jobs, properties: properties)
    }

    /// The reasons of the messages parked so far (worker events), in order.
    var parkedReasons: [String] {
        events.events.compactMap { if case .parked(_, let reason) = $0 { reason } else { nil } }
    }

    /// The harness app's job with `id`.
    func job(_ id: String, app: String = WorkerHarness.app) async throws -> JobStatus? {
        try await store.job(app: app, id: id)
    }

    /// Waits until the job with `id` (of `app`) is finished (by a worker event), returning its final state.
    func waitUntilFinished(_ id: String, app: String = WorkerHarness.app) async -> JobState {
        let events = await self.events.wait { events in
            events.contains { if case .finished(app, id, _) = $0 { true } else { false } }
        }
        for case .finished(app, id, let state) in events { return state }
        return .failed
    }

    /// Waits until every job in `ids` (of `app`) is finished (by a worker event) in `state`.
    func waitUntilFinished(_ ids: Set<String>, in state: JobState, app: String = WorkerHarness.app) async {
        _ = await events.wait { events in
            let finished = Set(
                events.compactMap { event -> String? in
                    if case .finished(app, let id, state) = event { return id }
                    return nil
                })
            return finished.isSuperset(of: ids)
        }
    }

    /// Starts a real `herald worker` process on this harness's queues, database and apps (for tests that kill it).
    func spawnWorkerProcess(arguments extra: [String] = []) throws -> Process {
        let appsFile = appsDirectory + "/apps.json"
        try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: appsFile))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.heraldExecutable)
        process.arguments =
            [
                "worker", "--apps-file", appsFile, "--queue-prefix", topology.prefix, "--metrics-port", "0",
                "--log-level", "warning",
            ] + extra
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_AMQP_URL"] = TestServices.amqpURL
        environment["HERALD_DATABASE_URL"] = database.url
        process.environment = environment
        try process.run()
        return process
    }

    /// The `herald` executable built next to the test bundle.
    static var heraldExecutable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald").path
    }

    /// The simulator's accepted notifications for job `id` (payload custom key `job`), as tokens.
    func received(job id: String) -> [String] {
        simulator.records.compactMap { record in
            guard let object = try? JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any],
                object["job"] as? String == id
            else { return nil }
            return record.token
        }
    }

    /// The simulator's accepted notifications for the job `id` of `app` (its topic), as tokens.
    func received(job id: String, app: String) -> [String] {
        simulator.records.compactMap { record in
            guard record.topic == app,
                let object = try? JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any],
                object["job"] as? String == id
            else { return nil }
            return record.token
        }
    }

    /// A job to every device, tagged so that its notifications can be told apart.
    static func broadcast(id: String, app: String = WorkerHarness.app, notification: JobNotification? = nil) -> Job {
        Job(
            id: id, app: app, target: .all,
            notification: notification ?? JobNotification(aps: ["alert": "hi"], custom: ["job": .string(id)]))
    }
}

/// A worker running in this process.
struct RunningWorker: Sendable {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    /// Graceful shutdown: stop consuming, finish what is in hand, then return.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
