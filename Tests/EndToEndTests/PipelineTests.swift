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
import Testing

/// The whole path against real RabbitMQ and PostgreSQL and the simulator: jobs in, notifications out, dead tokens
/// pruned, bad input parked with a reason while the worker carries on.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct PipelineTests {
    static let app = "com.example.news"

    struct Fixture {
        var devices: [DeviceRecord]
        var live: [DeviceRecord]
        var dead: [DeviceRecord]
    }

    static func makeDevices(count: Int) -> Fixture {
        let devices = (0..<count).map { i -> DeviceRecord in
            let dead = i % 10 == 9
            let hex = String(i, radix: 16)
            let token = (dead ? "dead" : "beef") + String(repeating: "0", count: 60 - hex.count) + hex
            return DeviceRecord(
                token: DeviceToken(trustedHex: token),
                userID: "user-\(i % 20)",
                locale: "en",
                topics: i % 4 == 0 ? ["sports"] : []
            )
        }
        return Fixture(
            devices: devices,
            live: devices.filter { !$0.token.hex.hasPrefix("dead") },
            dead: devices.filter { $0.token.hex.hasPrefix("dead") }
        )
    }

    @Test func jobsOfEveryTargetKindReachEveryLiveDeviceOnceAndPruneTheDead() async throws {
        let logger = Logger(label: "e2e")
        try await TemporaryDatabase.withMigratedStore { store, database in
            let fixture = Self.makeDevices(count: 200)
            _ = try await store.importDevices(fixture.devices, app: Self.app)
            let (simulator, port) = try await TestAPNs.startSimulator { $0.deadTokenPrefixes = ["dead"] }
            let (apps, directory) = try TestAPNs.appsFile(apps: [Self.app], port: port)
            defer { try? FileManager.default.removeItem(atPath: directory) }

            let events = EventCollector<JobEvent>()
            var configuration = WorkerConfiguration(
                amqp: try AMQPConfiguration(url: TestServices.amqpURL),
                database: database,
                apps: apps,
                appsDirectory: directory
            )
            configuration.topology = Topology(prefix: TestServices.uniqueName("e2e"))
            configuration.onJobHandled = { events.record($0) }
            let worker = try buildWorker(configuration: configuration, gracefulShutdownSignals: [], logger: logger)
            let running = Task { try await worker.run() }

            let connection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
            try await configuration.topology.declare(on: connection)
            let deadInList = fixture.dead[0].token.hex
            let jobs: [(String, Target, Set<DeviceToken>)] = [
                (
                    "tokens",
                    .tokens([fixture.live[0].token.hex.uppercased(), deadInList, "not-hex", fixture.live[1].token.hex]),
                    [fixture.live[0].token, fixture.live[1].token]
                ),
                (
                    "users", .users(["user-1", "user-2"]),
                    Set(fixture.live.filter { $0.userID == "user-1" || $0.userID == "user-2" }.map(\.token))
                ),
                ("topic", .topic("sports"), Set(fixture.live.filter { $0.topics.contains("sports") }.map(\.token))),
                ("all", .all, Set(fixture.live.map(\.token))),
            ]
            for (id, target, _) in jobs {
                let job = Job(
                    id: id, app: Self.app, target: target,
                    notification: JobNotification(aps: ["alert": "hello"], custom: ["job": .string(id)])
                )
                try await connection.publish(
                    Array(try JSONEncoder().encode(job)), routingKey: configuration.topology.jobs)
            }
            // Bad input: not JSON, an unknown app, an invalid notification. Each is parked; nothing else is lost.
            for body in [
                "{not json",
                #"{"app":"com.unknown","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}"#,
                #"{"app":"com.example.news","target":{"all":true},"notification":{"aps":{"alert":"hi"},"priority":3}}"#,
            ] {
                try await connection.publish(Array(body.utf8), routingKey: configuration.topology.jobs)
            }

            // Every job finished (a batch of a planned job reports its completion too) and every bad one parked.
            let ids = Set(jobs.map(\.0))
            let handled = await events.wait { events in
                let finished = Set(
                    events.compactMap { event -> String? in
                        if case .finished(_, let id, _) = event { id } else { nil }
                    })
                let parked = events.filter { if case .parked = $0 { true } else { false } }.count
                return finished.isSuperset(of: ids) && parked >= 3
            }
            let parked = handled.compactMap { event -> String? in
                if case .parked(_, let reason) = event { return reason }
                return nil
            }
            #expect(parked.count == 3)
            #expect(parked.contains { $0.contains("malformed") })
            #expect(parked.contains { $0.contains("unknown_app") })
            #expect(parked.contains { $0.contains("apns-priority 3") })

            // The parked messages carry their reason in a header.
            let parkedConsumer = try await connection.consume(queue: configuration.topology.parked, prefetch: 10)
            var reasons: [String] = []
            for try await delivery in parkedConsumer {
                if case .string(let reason) = delivery.properties.headers[ParkingHeader.reason] {
                    reasons.append(reason)
                }
                try await parkedConsumer.ack(delivery)
                if reasons.count == 3 { break }
            }
            #expect(Set(reasons) == Set(parked))

            // Every live device got exactly one notification per job.
            var received: [String: [DeviceToken]] = [:]
            for record in simulator.records {
                let object = try JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any]
                received[object?["job"] as? String ?? "?", default: []].append(DeviceToken(trustedHex: record.token))
            }
            for (id, _, expected) in jobs {
                let tokens = received[id] ?? []
                #expect(Set(tokens) == expected, "job \(id)")
                #expect(tokens.count == expected.count, "job \(id) duplicates")
                let status = try #require(try await store.job(app: Self.app, id: id))
                #expect(status.state == .done)
                #expect(status.counters.sent == expected.count)
            }
            // "not-hex" failed alone
            #expect(try await store.job(app: Self.app, id: "tokens")?.counters.failed ?? 0 >= 1)

            // Dead devices are gone and recorded.
            #expect(try await store.deviceCount(app: Self.app) == fixture.live.count)
            let dead = try await store.deadTokens(app: Self.app)
            #expect(Set(dead.map(\.token)) == Set(fixture.dead.map(\.token)))

            // Publishing a finished job again does not send it again.
            let before = simulator.records.count
            let again = Job(
                id: "topic", app: Self.app, target: .topic("sports"),
                notification: JobNotification(aps: ["alert": "hi"]))
            try await connection.publish(
                Array(try JSONEncoder().encode(again)), routingKey: configuration.topology.jobs)
            _ = await events.wait { $0.contains(.duplicate(app: Self.app, id: "topic", state: .done)) }
            #expect(simulator.records.count == before)

            await worker.triggerGracefulShutdown()
            try await running.value
            // The whole topology the test declared: batches, retry and webhook queues too, not only jobs and parked.
            try await configuration.topology.delete(on: connection)
            await connection.close()
            try await simulator.stop()
        }
    }
}
