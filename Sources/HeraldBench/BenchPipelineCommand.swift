import APNSCore
import ArgumentParser
import Crypto
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ
import WebPushCore
import _CryptoExtras

#if canImport(Glibc)
    import Glibc
#endif

/// `herald bench pipeline`: the whole pipeline against a fast HTTP/2 sink, with real worker processes.
///
/// (a) `--scenario broadcast`: one job to `--devices` imported devices; (b) `--scenario jobs`: `--jobs` single-device
/// jobs. Prints notifications/s (publish of the first job to the last result written), p50/p99 end-to-end latency
/// (per job for (b); per notification at batch granularity for (a)) and the workers' peak RSS.
struct BenchPipelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Measure the pipeline end to end: one broadcast, or many single-device jobs, against an HTTP/2 sink."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "broadcast (one job to every device) or jobs (one job per device).")
    var scenario: String = "broadcast"

    @Option(help: "Devices to import (broadcast) or jobs to publish (jobs).")
    var devices = 1_000_000

    @Option(help: "The sink, e.g. https://127.0.0.1:58443 (deploy/dev/sink.sh start).")
    var endpoint = "https://127.0.0.1:58443"

    @Option(help: "CA of the sink's certificate.") var caFile = ".state/demo/ca.pem"
    @Option(help: "A P-256 .p8 key to sign provider tokens with.") var keyFile = ".state/demo/AuthKey_DEMOKEY123.p8"
    @Option(help: "Worker processes.") var workers = 1
    @Option(help: "HTTP/2 connections per worker.") var connections = 1
    @Option(help: "Jobs each worker has in hand (its --prefetch); the worker's default if not given.") var prefetch:
        UInt16?
    @Option(help: "Batches each worker delivers at once (its --batch-prefetch); the worker's default if not given.")
    var batchPrefetch: UInt16?
    @Option(
        help: "Each worker's --plan-ahead (paced planning; 0 plans a job whole); the worker's default if not given.")
    var planAhead: Int?
    @Option(help: "Queue type: classic or quorum.") var queueType = "classic"
    @Option(
        help: """
            Jobs the publisher has unconfirmed at once (jobs scenario), like the C baseline's --confirm-window.
            """)
    var confirmWindow = 1000
    @Option(
        help: """
            The share of devices that are Android phones (0 to 1), sent through FCM: the app gets an fcm block whose \
            service account (a key made for the run) mints at the sink's /token.
            """)
    var android = 0.0
    @Option(
        help: """
            Characters in each Android registration token (23 to 4096). Real ones are about 140 to 180; 64, an APNs \
            token's length, separates the cost of a longer token from the cost of FCM.
            """)
    var androidTokenLength = 167
    @Option(
        help: """
            The share of devices that are browser subscriptions (0 to 1; broadcast only), sent through Web Push to the \
            sink's /push/: the app gets a webpush block with a VAPID key made for the run.
            """)
    var web = 0.0
    @Option(help: "The directory of SQL migrations.") var schemas = "schemas"
    @Flag(help: "Print one JSON object.") var json = false

    func run() async throws {
        let logger = services.makeLogger(label: "herald.bench")
        guard scenario == "broadcast" || scenario == "jobs" else {
            throw ValidationError("--scenario is broadcast or jobs")
        }
        guard Topology.QueueType(rawValue: queueType) != nil else {
            throw ValidationError("--queue-type is classic or quorum")
        }
        let amqpURL = try services.resolvedAMQPURL()
        let databaseURL = try services.resolvedDatabaseURL()
        let database = try DatabaseConfiguration(url: databaseURL)
        let app = "com.herald.bench"
        var generator = SystemRandomNumberGenerator()  // a name, not chance
        let run = String(UInt32.random(in: 0...UInt32.max, using: &generator), radix: 36)
        let prefix = "bench-\(run)"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(prefix).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        guard (0...1).contains(android), (0...1).contains(web), android + web <= 1 else {
            throw ValidationError("--android and --web are shares from 0 to 1, together at most 1")
        }
        guard (Self.androidPrefixLength...4096).contains(androidTokenLength) else {
            throw ValidationError("--android-token-length is from \(Self.androidPrefixLength) to 4096")
        }
        guard web == 0 || scenario == "broadcast" else {
            throw ValidationError("--web takes the broadcast scenario (a job lists no browser endpoints)")
        }
        let ca = URL(fileURLWithPath: caFile).standardizedFileURL.path
        var fcm: AppConfiguration.FCM? = nil
        if android > 0 {
            try Self.writeServiceAccount(to: directory + "/firebase.json", tokenURI: endpoint + "/token")
            fcm = .init(serviceAccountFile: directory + "/firebase.json", endpoint: endpoint, caFile: ca)
        }
        var webpush: AppConfiguration.WebPush? = nil
        if web > 0 {
            let path = directory + "/vapid.pem"
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(VAPIDKey.generate().pem.utf8), attributes: [.posixPermissions: 0o600])
            else { throw ValidationError("cannot write \(path)") }
            webpush = .init(vapidPrivateKeyFile: path, subject: "mailto:bench@herald.example", caFile: ca)
        }
        let apps = AppsFile(apps: [
            AppConfiguration(
                id: app, topic: app, environment: .sandbox, endpoint: endpoint, caFile: ca,
                auth: .token(
                    teamID: "BENCHTEAM1", keyID: "BENCHKEY01",
                    keyFile: URL(fileURLWithPath: keyFile).standardizedFileURL.path),
                fcm: fcm,
                webpush: webpush
            )
        ])
        let share = android
        let tokenLength = androidTokenLength
        let webShare = web
        let subscriptionKeys = web > 0 ? try Self.subscriptionKeys() : []
        let endpoint = self.endpoint
        try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: directory + "/apps.json"))

        let count = devices
        let isBroadcast = scenario == "broadcast"
        let result = try await Store.withStore(database, logger: logger) { store in
            try await store.migrate(try Migration.load(from: schemas))
            try await store.deleteDevices(app: app)
            try await store.deleteJobs(app: app)  // a run that was interrupted leaves its jobs behind
            FileHandle.standardError.write(Data("importing \(count) devices…\n".utf8))
            // Imported as `herald devices import` imports, and nothing more: the import analyses the devices table
            // itself; the bench adds no VACUUM or ANALYZE of its own that a user's commands would not run.
            _ = try await DeviceImporter(store: store, app: app, batchSize: 50_000).run(
                records: (0..<count).lazy.map {
                    Self.device(
                        $0, androidShare: share, androidTokenLength: tokenLength, webShare: webShare,
                        endpoint: endpoint, keys: subscriptionKeys)
                })

            let connection = try await AMQPConnection.connect(try AMQPConfiguration(url: amqpURL), logger: logger)
            let topology = Topology(prefix: prefix, queueType: Topology.QueueType(rawValue: queueType)!)
            try await topology.declare(on: connection)
            let processes = try (0..<workers).map { _ in
                try spawnWorker(
                    appsFile: directory + "/apps.json", prefix: prefix, amqpURL: amqpURL, databaseURL: databaseURL)
            }
            defer { for process in processes where process.isRunning { process.terminate() } }
            while try await connection.declareQueue(
                topology.jobs, durable: true, arguments: topology.workQueueArguments
            ).consumerCount < workers {
                try await HeraldClock.system.sleep(.milliseconds(50))
            }

            FileHandle.standardError.write(Data("publishing…\n".utf8))
            // The workers' CPU from here to the end: what the run costs them per notification.
            let cpuBefore = processes.compactMap { CPUTime.ofProcess($0.processIdentifier) }.reduce(0, +)
            // The run ends when the last result was written (its row's time), not when the polling below notices:
            // that would add up to two polling intervals.
            let startedAt = HeraldClock.system.unixTime() * 1000
            if isBroadcast {
                let job = Job(id: prefix, app: app, target: .all, notification: Self.notification)
                try await connection.publish(
                    try job.jsonBytes(), routingKey: topology.jobs,
                    properties: Self.jobProperties(id: prefix))
                while try await store.job(app: app, id: prefix)?.state.isFinal != true {
                    try await HeraldClock.system.sleep(.milliseconds(20))
                }
            } else {
                // Published in chunks of a quarter of the window, up to four chunks unconfirmed: one wait per
                // chunk instead of one task and one wait per job (which cost the bench 9-15 us of CPU a job).
                // The rule for what the clock covers: it starts where a producer's publish starts, and a producer
                // does not have its bodies ready (HeraldProducer's `publish` and `herald publish` encode each job in
                // the call), so the bodies are encoded here, inside the clock, as they are published, with the
                // encoder HeraldProducer uses (`Job.jsonBytes`).
                let chunk = max(1, confirmWindow / 4)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (number, start) in stride(from: 0, to: count, by: chunk).enumerated() {
                        if number >= 4 { try await group.next() }
                        let end = min(start + chunk, count)
                        group.addTask {
                            let now = HeraldClock.system.unixSeconds
                            try await connection.publish(
                                contentsOf: try (start..<end).map { i in
                                    let job = Job(
                                        id: "\(prefix)-\(i)", app: app,
                                        target: .tokens([
                                            Self.device(i, androidShare: share, androidTokenLength: tokenLength)
                                                .token.hex
                                        ]),
                                        notification: Self.notification)
                                    return (
                                        try job.jsonBytes(),
                                        Self.jobProperties(id: "\(prefix)-\(i)", publishedAt: now)
                                    )
                                },
                                routingKey: topology.jobs)
                        }
                    }
                    try await group.waitForAll()
                }
                // The queue first (cheap to ask), then the jobs table: counting finished jobs reads every job row,
                // and doing it throughout the run took CPU from the pipeline being measured.
                while try await connection.declareQueue(
                    topology.jobs, durable: true, arguments: topology.workQueueArguments
                ).messageCount > 0 {
                    try await HeraldClock.system.sleep(.milliseconds(100))
                }
                while try await store.finishedJobCount(app: app, idPrefix: prefix + "-") < count {
                    try await HeraldClock.system.sleep(.milliseconds(100))
                }
            }
            let rss = processes.map { Self.peakRSSMegabytes(pid: $0.processIdentifier) }.max() ?? 0
            let cpuAfter = processes.compactMap { CPUTime.ofProcess($0.processIdentifier) }.reduce(0, +)
            let workerCPU = (cpuAfter - cpuBefore) * 1e6 / Double(count)
            let latency =
                isBroadcast
                ? try await store.batchLatency(job: JobKey(app: app, id: prefix))
                : try await store.jobLatency(app: app, idPrefix: prefix + "-")
            for process in processes { process.terminate() }
            for process in processes { process.waitUntilExit() }
            try? await topology.delete(on: connection)
            await connection.close()
            try await store.deleteDevices(app: app)
            try await store.deleteJobs(app: app)
            let seconds = max(0.001, (latency.lastResultMilliseconds - startedAt) / 1000)
            return (Double(count) / seconds, latency, rss, seconds, workerCPU)
        }
        let (perSecond, latency, rss, seconds, workerCPU) = result
        if json {
            print(
                #"{"scenario":"\#(scenario)","notifications":\#(count),"android_share":\#(android),"android_token_length":\#(androidTokenLength),"web_share":\#(web),"workers":\#(workers),"plan_ahead":\#(planAhead.map(String.init) ?? "null"),"seconds":\#(Self.fixed(seconds)),"notifications_per_second":\#(Self.fixed(perSecond)),"p50_ms":\#(Self.fixed(latency.p50Milliseconds)),"p99_ms":\#(Self.fixed(latency.p99Milliseconds)),"peak_rss_mb":\#(Self.fixed(rss)),"worker_cpu_us_per_notification":\#(String(format: "%.2f", workerCPU))}"#
            )
        } else {
            let paced = planAhead.map { ", planning paced at \($0) batches" } ?? ""
            print(
                "scenario \(scenario): \(count) notifications, \(workers) worker(s)\(paced), \(Self.fixed(seconds)) s")
            print("  notifications/s  \(Self.fixed(perSecond))")
            print(
                "  latency p50 / p99  \(Self.fixed(latency.p50Milliseconds)) ms / \(Self.fixed(latency.p99Milliseconds)) ms"
            )
            print("  peak worker RSS  \(Self.fixed(rss)) MB")
            print("  worker CPU  \(String(format: "%.2f", workerCPU)) µs per notification")
        }
    }

    static let notification = JobNotification(
        aps: [
            "alert": [
                "title": "Herald",
                "body":
                    "A benchmark notification of a realistic size, about two hundred and fifty bytes in all, with a title, a body and a little custom data beside it.",
            ]
        ],
        custom: ["kind": "bench", "ref": 12345]
    )

    static func token(_ n: Int) -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: "be" + String(repeating: "0", count: 62 - hex.count) + hex)
    }

    /// Device `n`: an Android phone (an FCM registration token of the usual length) for a share `androidShare` of
    /// them, spread evenly; an iPhone otherwise.
    static func device(
        _ n: Int, androidShare: Double, androidTokenLength: Int = 167, webShare: Double = 0, endpoint: String = "",
        keys: [WebPushKeys] = []
    ) -> DeviceRecord {
        if webShare > 0, Int(Double(n + 1) * webShare) > Int(Double(n) * webShare),
            let endpoint = try? WebPushEndpoint(endpoint + "/push/" + String(n, radix: 36))
        {
            // A browser subscription at the sink, with one of the run's key pairs (their number does not change
            // the cost of encrypting for them).
            return DeviceRecord(
                webSubscription: WebPushSubscription(
                    endpoint: endpoint, keys: keys[n % keys.count], expirationTime: nil))
        }
        guard androidShare > 0, Int(Double(n + 1) * androidShare) > Int(Double(n) * androidShare) else {
            return DeviceRecord(token: token(n))
        }
        let hex = String(n, radix: 16)
        let text =
            "bf" + String(repeating: "0", count: 14 - hex.count) + hex + ":APA91b"
            + androidFiller.prefix(androidTokenLength - androidPrefixLength)
        return DeviceRecord(token: DeviceToken(trustedHex: text), platform: .android)
    }

    /// An Android token's numbered prefix (`bf`, 14 hex digits, `:APA91b`); the filler makes up the rest.
    static let androidPrefixLength = 23
    private static let androidFiller = String(repeating: "Bn4_Kq-7", count: 512)

    /// Browsers' subscription keys for the run: a thousand P-256 key pairs and secrets, used in turn.
    static func subscriptionKeys() throws -> [WebPushKeys] {
        var generator = SystemRandomNumberGenerator()
        return try (0..<1000).map { _ in
            let auth = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return try WebPushKeys(
                p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation), auth: auth)
        }
    }

    /// A service account key file for the run, minting at `tokenURI` (the sink answers a fixed token there).
    static func writeServiceAccount(to path: String, tokenURI: String) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let object: [String: String] = [
            "type": "service_account", "project_id": "herald-bench", "private_key_id": "bench-key-1",
            "private_key": key.pemRepresentation + "\n", "client_email": "bench@herald-bench.iam.gserviceaccount.com",
            "token_uri": tokenURI,
        ]
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(
            to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    static func fixed(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A job message's properties, as a producer sets them: its id, when it was published (s since 1970), and the
    /// broker priority of its notification (the bench's are at APNs' default, 10).
    private static func jobProperties(id: String, publishedAt: Int64 = HeraldClock.system.unixSeconds)
        -> AMQPProperties
    {
        AMQPProperties(
            contentType: "application/json", messageID: id, timestamp: publishedAt,
            priority: Job.brokerPriority(apnsPriority: nil, bulk: false))
    }

    private func spawnWorker(appsFile: String, prefix: String, amqpURL: String, databaseURL: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var arguments = [
            "worker", "--apps-file", appsFile, "--queue-prefix", prefix, "--queue-type", queueType,
            "--connections", String(connections), "--metrics-port", "0", "--log-level", "warning",
        ]
        if let prefetch { arguments += ["--prefetch", String(prefetch)] }
        if let batchPrefetch { arguments += ["--batch-prefetch", String(batchPrefetch)] }
        if let planAhead { arguments += ["--plan-ahead", String(planAhead)] }
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_AMQP_URL"] = amqpURL
        environment["HERALD_DATABASE_URL"] = databaseURL
        process.environment = environment
        try process.run()
        return process
    }

    /// The peak resident set size of a process (VmHWM), in MB.
    static func peakRSSMegabytes(pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}
