import APNSCore
import APNSSimulator
import ArgumentParser
import FCMSimulator
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldWorker
import Logging
import NIOPosix
import RabbitMQ
import ServiceLifecycle

/// `herald demo`: the whole path once, on embedded defaults — the APNs, FCM and Web Push simulators, a worker, 1,000
/// devices and 50 browsers (iPhones, Android phones and browser subscriptions of the same users, some dead), jobs of
/// every target kind, a summary, and a check that every live device of every platform got exactly one notification
/// per job (a browser's decrypted).
/// Registered by the `herald` executable; its own module so that the production modules carry no demo code.
package struct DemoCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the main job end to end against the local services and the APNs simulator, then check it."
    )

    package init() {}

    @OptionGroup var services: ServiceOptions

    @Option(help: "Directory holding ca.pem, server.pem, server.key and AuthKey_DEMOKEY123.p8 (made by make demo).")
    var stateDir: String = ".state/demo"

    @Option(help: "The directory of SQL migrations.")
    var schemas: String = "schemas"

    @Option(help: "Devices to import.")
    var devices: Int = 1000

    package func run() async throws {
        let logger = services.makeLogger(label: "herald.demo")
        let amqpURL = (try? services.resolvedAMQPURL()) ?? DemoScenario.defaultAMQPURL
        let databaseURL = (try? services.resolvedDatabaseURL()) ?? DemoScenario.defaultDatabaseURL
        let scenario = DemoScenario(
            stateDirectory: stateDir,
            schemasDirectory: schemas,
            deviceCount: devices,
            amqp: try AMQPConfiguration(url: amqpURL),
            database: try DatabaseConfiguration(url: databaseURL),
            logger: logger
        )
        let report = try await scenario.run()
        print(report.table)
        guard report.passed else {
            for problem in report.problems { print("problem: \(problem)") }
            throw ExitCode.failure
        }
        print("demo passed: every live device received exactly one notification per job; dead tokens pruned")
    }
}

/// The demo's steps, kept apart from flag parsing.
struct DemoScenario {
    static let defaultAMQPURL = "amqp://herald:herald-dev@127.0.0.1:56720/%2f"
    static let defaultDatabaseURL = "postgres://herald:herald-dev@127.0.0.1:55432/herald"
    static let app = "com.example.news"
    static let teamID = "DEMOTEAM12"
    static let keyID = "DEMOKEY123"

    let stateDirectory: String
    let schemasDirectory: String
    let deviceCount: Int
    let amqp: AMQPConfiguration
    let database: DatabaseConfiguration
    let logger: Logger

    struct Report {
        var table: String
        var problems: [String]
        var passed: Bool { problems.isEmpty }
    }

    /// A demo device: live ones start with `a11e`, dead ones with `dead` (the simulators answer those 410 and 404
    /// UNREGISTERED). Every fourth is an Android phone (an FCM registration token) of a user who also has iPhones.
    struct Device {
        var token: String
        var user: String
        var topics: [String]
        var isDead: Bool
        var platform: DevicePlatform = .ios
    }

    func makeDevices() -> [Device] {
        (0..<deviceCount).map { i in
            // Every twentieth iPhone and every tenth Android phone is dead.
            let dead = i % 20 == 19 || i % 40 == 5
            let hex = String(i, radix: 16)
            var topics: [String] = []
            if i % 3 == 0 { topics.append("sports") }
            if i % 5 == 0 { topics.append("news") }
            guard i % 4 == 1 else {
                let token = (dead ? "dead" : "a11e") + String(repeating: "0", count: 60 - hex.count) + hex
                return Device(token: token, user: "user-\(i % 200)", topics: topics, isDead: dead)
            }
            let token = (dead ? "dead" : "a11e") + "\(hex):APA91b" + String(repeating: "Dm0-Fcm_", count: 17)
            // The phone of the user whose iPhone is the device before it.
            return Device(
                token: token, user: "user-\((i - 1) % 200)", topics: topics, isDead: dead, platform: .android)
        }
    }

    /// The jobs: two of each target kind, a bad token in one list, plus two that must be parked.
    func makeJobs(_ devices: [Device]) -> [(id: String, kind: String, target: Target, expected: Set<String>)] {
        let live = devices.filter { !$0.isDead }
        func audience(_ include: (Device) -> Bool) -> Set<String> { Set(live.filter(include).map(\.token)) }
        let run = UUID().uuidString.lowercased().prefix(8)
        let listA = Array(devices[0..<10].map(\.token))
        let listB = Array(devices[100..<105].map(\.token)) + ["not-a-device-token"]
        let usersA = (0..<10).map { "user-\($0)" }
        let usersB = (100..<120).map { "user-\($0)" }
        return [
            ("demo-\(run)-tokens-1", "tokens", .tokens(listA), audience { listA.contains($0.token) }),
            ("demo-\(run)-tokens-2", "tokens", .tokens(listB), audience { listB.contains($0.token) }),
            ("demo-\(run)-users-1", "users", .users(usersA), audience { usersA.contains($0.user) }),
            ("demo-\(run)-users-2", "users", .users(usersB), audience { usersB.contains($0.user) }),
            ("demo-\(run)-topic-1", "topic", .topic("sports"), audience { $0.topics.contains("sports") }),
            ("demo-\(run)-topic-2", "topic", .topic("news"), audience { $0.topics.contains("news") }),
            ("demo-\(run)-all-1", "all", .all, audience { _ in true }),
            ("demo-\(run)-all-2", "all", .all, audience { _ in true }),
        ]
    }

    func run() async throws -> Report {
        try await Store.withStore(database, logger: logger) { store in try await run(store: store) }
    }

    private func run(store: Store) async throws -> Report {
        let directory = stateDirectory
        let keyPath = directory + "/AuthKey_\(Self.keyID).p8"
        let providerPublicKey = try publicKeyPEM(atPath: keyPath)

        // 1. Schema and devices.
        try await migrateAndImport(store)

        // 2. The simulator on a free port, and an apps file pointing at it.
        var simulatorConfiguration = APNSSimulatorConfiguration(
            certificateChainPEM: try read(directory + "/server.pem"),
            privateKeyPEM: try read(directory + "/server.key"),
            providerKeys: [
                Self.keyID: APNSSimulatorConfiguration.ProviderKey(teamID: Self.teamID, publicKeyPEM: providerPublicKey)
            ]
        )
        simulatorConfiguration.deadTokenPrefixes = ["dead"]
        let simulator = APNSSimulator(
            configuration: simulatorConfiguration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        )
        let port = try await simulator.start()
        // FCM's simulator, and a service account of a demo Firebase project (a key made for this run).
        let firebase = try DemoFirebase(directory: directory)
        var fcmConfiguration = FCMSimulatorConfiguration(
            certificateChainPEM: try read(directory + "/server.pem"),
            privateKeyPEM: try read(directory + "/server.key"),
            serviceAccounts: [
                DemoFirebase.clientEmail: .init(publicKeyPEM: firebase.publicKeyPEM, projectID: DemoFirebase.projectID)
            ])
        fcmConfiguration.deadTokenPrefixes = ["dead"]
        let fcm = FCMSimulator(
            configuration: fcmConfiguration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let fcmPort = try await fcm.start()
        try firebase.writeServiceAccount(tokenURI: fcm.tokenAudience)
        // Browsers: the Web Push simulator, the app's VAPID key, and a browser subscription for 50 of the users.
        let browsers = try await DemoBrowsers.start(
            directory: directory, certificatePEM: try read(directory + "/server.pem"),
            keyPEM: try read(directory + "/server.key"), logger: logger)
        let subscriptions = try browsers.subscribe(users: 50)
        _ = try await DeviceImporter(store: store, app: Self.app, batchSize: 10_000).run(
            records: subscriptions.map(\.device))
        print("imported \(subscriptions.count) browser subscriptions (\(subscriptions.filter(\.isDead).count) dead)")
        let apps = AppsFile(apps: [
            AppConfiguration(
                id: Self.app,
                topic: Self.app,
                environment: .sandbox,
                endpoint: "https://127.0.0.1:\(port)",
                caFile: "ca.pem",
                auth: .token(teamID: Self.teamID, keyID: Self.keyID, keyFile: "AuthKey_\(Self.keyID).p8"),
                fcm: .init(
                    serviceAccountFile: DemoFirebase.fileName, endpoint: "https://127.0.0.1:\(fcmPort)",
                    caFile: "ca.pem",
                    channelID: "news"),
                webpush: browsers.settings
            )
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(apps).write(to: URL(fileURLWithPath: directory + "/apps.json"))

        // 3. A worker, exactly as `herald worker` builds it.
        let worker = try buildWorker(
            configuration: WorkerConfiguration(amqp: amqp, database: database, apps: apps, appsDirectory: directory),
            gracefulShutdownSignals: [],
            logger: logger
        )
        let workerTask = Task { try await worker.run() }

        // 4. Publish the jobs and two bad messages.
        let devices =
            makeDevices()
            + subscriptions.map {
                Device(
                    token: $0.device.token.hex, user: $0.device.userID ?? "", topics: [], isDead: $0.isDead,
                    platform: .web)
            }
        let jobs = makeJobs(devices)
        let connection = try await AMQPConnection.connect(amqp, logger: logger)
        let topology = Topology()
        try await topology.declare(on: connection)
        let parkedBefore = try await connection.queueMessageCount(topology.parked)
        for job in jobs {
            let body = Job(
                id: job.id,
                app: Self.app,
                target: job.target,
                notification: JobNotification(
                    priority: 10,
                    aps: ["alert": .object(["title": "Herald demo", "body": .string("Job \(job.kind)")])],
                    custom: ["demo_job": .string(job.id)]
                )
            )
            try await connection.publish(
                Array(try JSONEncoder().encode(body)),
                routingKey: topology.jobs,
                properties: AMQPProperties(
                    contentType: "application/json", messageID: job.id, priority: body.brokerPriority(bulk: false))
            )
        }
        try await connection.publish(Array("this is not json".utf8), routingKey: topology.jobs)
        let unknownApp = #"{"app":"com.example.unknown","target":{"all":true},"notification":{"aps":{"alert":"x"}}}"#
        try await connection.publish(Array(unknownApp.utf8), routingKey: topology.jobs)
        print("published \(jobs.count) jobs and 2 malformed messages to \(topology.jobs)")

        // 5. Wait until every job is final (bounded), then stop the worker.
        var statuses: [String: JobStatus] = [:]
        let deadline = ContinuousClock.now + .seconds(120)
        while statuses.count < jobs.count || statuses.values.contains(where: { !$0.state.isFinal }) {
            guard ContinuousClock.now < deadline else { break }
            for job in jobs { statuses[job.id] = try await store.job(app: Self.app, id: job.id) }
            try await HeraldClock.system.sleep(.milliseconds(200))
        }
        var parkedAfter = try await connection.queueMessageCount(topology.parked)
        while parkedAfter < parkedBefore + 2, ContinuousClock.now < deadline {
            try await HeraldClock.system.sleep(.milliseconds(100))
            parkedAfter = try await connection.queueMessageCount(topology.parked)
        }
        // 6. One Live Activity from its start to its end.
        let activity = try await DemoLiveActivity(
            app: Self.app, device: try DeviceToken(parsing: devices[0].token), store: store, connection: connection,
            topology: topology, simulator: simulator
        ).run()
        await connection.close()
        await worker.triggerGracefulShutdown()
        try await workerTask.value
        try await simulator.stop()
        try await fcm.stop()
        try await browsers.simulator.stop()

        var report = try await check(
            jobs: jobs, devices: devices, statuses: statuses, simulator: simulator, fcm: fcm, browsers: browsers,
            store: store, parked: Int(parkedAfter - parkedBefore))
        report.table += "\n" + activity.lines.joined(separator: "\n")
        report.problems += activity.problems
        return report
    }

    private func migrateAndImport(_ store: Store) async throws {
        let devices = makeDevices()
        let records = try devices.map {
            DeviceRecord(
                token: $0.platform == .ios ? try DeviceToken(parsing: $0.token) : DeviceToken(trustedHex: $0.token),
                userID: $0.user, locale: "en", topics: $0.topics, platform: $0.platform)
        }
        try await store.migrate(try Migration.load(from: schemasDirectory))
        try await store.deleteDevices(app: Self.app)
        // As `herald devices import` does it, statistics included.
        let imported = try await DeviceImporter(store: store, app: Self.app, batchSize: 10_000).run(records: records)
            .imported
        let android = devices.filter { $0.platform == .android }.count
        print(
            "imported \(imported) devices (\(android) Android phones, \(devices.filter(\.isDead).count) dead) for \(Self.app)"
        )
    }

    private func check(
        jobs: [(id: String, kind: String, target: Target, expected: Set<String>)],
        devices: [Device],
        statuses: [String: JobStatus],
        simulator: APNSSimulator,
        fcm: FCMSimulator,
        browsers: DemoBrowsers,
        store: Store,
        parked: Int
    ) async throws -> Report {
        var received: [String: [String]] = [:]
        for record in simulator.records {
            guard let data = record.payload.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let job = object["demo_job"] as? String
            else { continue }
            received[job, default: []].append(record.token)
        }
        for record in fcm.records {
            guard let object = try? JSONSerialization.jsonObject(with: Data(record.messageJSON.utf8)) as? [String: Any],
                let job = (object["data"] as? [String: String])?["demo_job"]
            else { continue }
            received[job, default: []].append(record.target.value)
        }
        for (job, endpoints) in browsers.received() { received[job, default: []] += endpoints }
        var problems: [String] = []
        var rows = [["job", "target", "state", "targeted", "sent", "pruned", "failed", "check"]]
        for job in jobs {
            let tokens = received[job.id] ?? []
            let unique = Set(tokens)
            var check = "ok"
            if unique != job.expected {
                check = "MISMATCH"
                problems.append("\(job.id): \(unique.count) devices notified, \(job.expected.count) expected")
            } else if tokens.count != unique.count {
                check = "DUPLICATES"
                problems.append("\(job.id): \(tokens.count - unique.count) duplicate notifications")
            }
            guard let status = statuses[job.id] else {
                problems.append("\(job.id): no job record")
                rows.append([job.id, job.kind, "missing", "-", "-", "-", "-", "MISSING"])
                continue
            }
            if status.state != .done { problems.append("\(job.id): state \(status.state.rawValue)") }
            let c = status.counters
            rows.append([
                job.id, job.kind, status.state.rawValue, "\(c.targeted)", "\(c.sent)", "\(c.pruned)", "\(c.failed)",
                check,
            ])
        }
        let totals = jobs.compactMap { statuses[$0.id]?.counters }.reduce(into: JobCounters()) {
            $0.targeted += $1.targeted
            $0.sent += $1.sent
            $0.pruned += $1.pruned
            $0.failed += $1.failed
        }
        rows.append([
            "total", "", "", "\(totals.targeted)", "\(totals.sent)", "\(totals.pruned)", "\(totals.failed)", "",
        ])

        let remaining = try await store.deviceCount(app: Self.app)
        let deadCount = devices.filter(\.isDead).count
        if remaining != devices.count - deadCount {
            problems.append("\(remaining) devices remain; \(devices.count - deadCount) live expected (dead not pruned)")
        }
        if parked < 2 { problems.append("\(parked) malformed messages parked, 2 expected") }
        var table = Self.format(rows)
        table += "\n" + Self.legend(deadCount: deadCount)
        table += "\nparked malformed messages: \(parked); devices left: \(remaining) of \(devices.count)"
        table += "\n" + simulator.summary() + "\n" + fcm.summary() + "\n" + browsers.simulator.summary()
        return Report(table: table, problems: problems)
    }

    /// What each column of the table counts, and why a passing run shows failures.
    static func legend(deadCount: Int) -> String {
        """
        targeted  devices the job resolved to (its tokens, the user's, the topic's, or the whole app's)
        sent      notifications APNs, FCM and the browsers' push service (here their simulators) accepted: one per live
                  iPhone, Android phone and browser
        pruned    devices APNs answered 410 Unregistered, FCM 404 UNREGISTERED or the push service 410: deleted, listed
                  in the dead-token report; \(deadCount) of the demo's devices are dead
        failed    devices neither sent nor pruned. In a passing demo these are dead devices that another job had
                  just pruned: this job had targeted them before they were deleted, so their 410 is recorded as a
                  failure with the reason "already pruned" (table delivery_failures), not pruned twice
        check     ok when the simulator received exactly one notification for each live device the job should reach
        """
    }

    static func format(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == 0 || index == 1 || index == 2 || index == row.count - 1
                    ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
