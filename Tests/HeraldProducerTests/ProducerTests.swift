import APNSCore
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Logging
import RabbitMQ
import Testing

/// The producer against a real broker, and a job it publishes delivered by a real worker to the simulator.
@Suite(.needsServices) struct ProducerTests {
    static let app = "com.example.news"

    static func token(_ n: Int) -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: "cafe" + String(repeating: "0", count: 60 - hex.count) + hex)
    }

    @Test func aPublishedJobIsDeliveredByTheWorker() async throws {
        let logger = Logger(label: "test.producer")
        try await TemporaryDatabase.withMigratedStore { store, database in
            let devices = (0..<5).map { DeviceRecord(token: Self.token($0), userID: "u\($0)", topics: ["sports"]) }
            _ = try await store.importDevices(devices, app: Self.app)
            let (simulator, port) = try await TestAPNs.startSimulator()
            let (apps, directory) = try TestAPNs.appsFile(apps: [Self.app], port: port)
            defer { try? FileManager.default.removeItem(atPath: directory) }

            let events = EventCollector<JobEvent>()
            var configuration = WorkerConfiguration(
                amqp: try AMQPConfiguration(url: TestServices.amqpURL), database: database, apps: apps,
                appsDirectory: directory
            )
            let topology = Topology(prefix: TestServices.uniqueName("producer"))
            configuration.topology = topology
            configuration.onJobHandled = { events.record($0) }
            let worker = try buildWorker(configuration: configuration, gracefulShutdownSignals: [], logger: logger)
            let running = Task { try await worker.run() }

            var producerConfiguration = ProducerConfiguration(amqp: configuration.amqp, queue: topology.jobs)
            producerConfiguration.prepareConnection = { try await topology.declare(on: $0) }
            let producer = Producer(configuration: producerConfiguration, logger: logger)
            let published = try await producer.publish(
                .alert(title: "Goal!", body: "2–1").sound(.default).custom("job", "producer-1").collapseID("score"),
                app: Self.app,
                to: .topic("sports"),
                id: "producer-1"
            )
            #expect(published.id == "producer-1")

            // A job the builder rejects never reaches the broker.
            await #expect(throws: ProducerError.self) {
                try await producer.publish(.alert(body: "x").badge(-1), app: Self.app, to: .all)
            }
            await #expect(throws: ProducerError.self) {
                try await producer.publish(Job(app: Self.app, target: .tokens([]), notification: .init(aps: [:])))
            }

            _ = await events.wait { $0.contains(.finished(app: Self.app, id: "producer-1", state: .done)) }
            let records = simulator.records
            #expect(Set(records.map(\.token)) == Set(devices.map(\.token.hex)))
            #expect(records.allSatisfy { $0.collapseID == "score" })
            let payload = try #require(records.first?.payload)
            let object = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
            #expect(object?["job"] as? String == "producer-1")
            let aps = object?["aps"] as? [String: Any]
            #expect((aps?["alert"] as? [String: Any])?["title"] as? String == "Goal!")
            #expect(aps?["sound"] as? String == "default")
            #expect(try await store.job(app: Self.app, id: "producer-1")?.counters.sent == devices.count)
            // Only the valid job was ever handled.
            #expect(
                events.events.allSatisfy { event in
                    if case .parked = event { return false }
                    return true
                })

            await producer.close()
            await #expect(throws: ProducerError.self) {
                try await producer.publish(.alert(body: "late"), app: Self.app, to: .all)
            }
            await worker.triggerGracefulShutdown()
            try await running.value
            let connection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
            // Every queue and exchange the worker declared (the webhook queues too, which a list kept here missed).
            try await topology.delete(on: connection)
            await connection.close()
            try await simulator.stop()
        }
    }

    @Test func publishesAreConfirmedAndCarryTheJobID() async throws {
        let logger = Logger(label: "test.producer")
        let queue = TestServices.uniqueName("producer.jobs")
        var configuration = ProducerConfiguration(amqp: try AMQPConfiguration(url: TestServices.amqpURL), queue: queue)
        configuration.prepareConnection = { _ = try await $0.declareQueue(queue, durable: true) }
        let producer = Producer(configuration: configuration, logger: logger)
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<20 {
                group.addTask {
                    try await producer.publish(.alert(body: "n\(i)"), app: Self.app, to: .users(["u\(i)"])).id
                }
            }
            var ids: [String] = []
            for try await id in group { ids.append(id) }
            return ids
        }
        #expect(Set(ids).count == 20)
        await producer.close()

        let connection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
        #expect(try await connection.queueMessageCount(queue) == 20)
        let consumer = try await connection.consume(queue: queue, prefetch: 20)
        var seen: Set<String> = []
        for try await delivery in consumer {
            let job = try JSONDecoder().decode(Job.self, from: Data(delivery.body))
            #expect(job.id == delivery.properties.messageID)
            #expect(delivery.properties.persistent)
            seen.insert(job.id ?? "")
            try await consumer.ack(delivery)
            if seen.count == 20 { break }
        }
        #expect(seen == Set(ids))
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func anUnroutableQueueFailsWithPublishFailed() async throws {
        let producer = Producer(
            configuration: .init(
                amqp: try AMQPConfiguration(url: TestServices.amqpURL), queue: TestServices.uniqueName("missing")),
            logger: Logger(label: "test.producer")
        )
        do {
            try await producer.publish(.alert(body: "x"), app: Self.app, to: .all)
            Issue.record("a publish to a missing queue must fail")
        } catch {
            #expect(error.code == .publishFailed)
        }
        await producer.close()
    }
}
