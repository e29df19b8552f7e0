import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldWorker
import Logging
import RabbitMQ

/// `herald worker`: consume jobs and deliver them until SIGTERM.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Consume jobs from RabbitMQ, resolve devices in PostgreSQL, deliver to APNs, write results back."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The apps file (env HERALD_APPS_FILE).")
    var appsFile: String?

    @Option(help: "Jobs in hand at once (AMQP prefetch on herald.jobs).")
    var prefetch: UInt16 = 1024

    @Option(help: "HTTP/2 connections per app.")
    var connections: Int = 2

    @Option(help: "Queue name prefix.")
    var queuePrefix: String = Topology.defaultPrefix

    @Option(help: "Queue type of the work queues: classic or quorum.")
    var queueType: String = "classic"

    @Option(help: "Batches delivered at once (AMQP prefetch on herald.batches).")
    var batchPrefetch: UInt16 = 4

    @Option(help: "Devices per batch.")
    var batchSize: Int = 1000

    @Option(
        help: """
            Batches of a job planned before its planning pauses until fewer than this many are pending, so that \
            other jobs' batches get past a large broadcast's (0 plans a job whole; up to 1000000).
            """)
    var planAhead: Int = 100

    @Option(help: "The largest job or batch message read, in bytes; larger ones are parked unread.")
    var maxMessageBytes: Int = 1 << 20

    @Option(help: "Deliveries of one message (quorum queues count them) before it is parked instead of handled.")
    var maxDeliveries: Int = 10

    @Option(help: "Prune breaker: stop a job when BadDeviceToken/NotForTopic answers exceed this share (0 to 1).")
    var pruneBreakerShare: Double = 0.5

    @Option(help: "Prune breaker: answers needed before it decides (1 to 1000000).")
    var pruneBreakerMinimum: Int = 20

    @Option(help: "Address for /metrics and /health (env HERALD_METRICS_HOST).")
    var metricsHost: String?

    @Option(help: "Port for /metrics and /health; 0 disables (env HERALD_METRICS_PORT).")
    var metricsPort: Int?

    @Option(
        help: "Keep finished jobs, and so their ids, this long: 7d; 0 for ever (env HERALD_FINISHED_JOBS_RETENTION).")
    var finishedJobsRetention: String?

    @Option(help: "Keep dead_tokens rows this long: 90d; 0 for ever (env HERALD_DEAD_TOKENS_RETENTION).")
    var deadTokensRetention: String?

    @Option(help: "Keep delivery_failures rows this long: 30d; 0 for ever (env HERALD_DELIVERY_FAILURES_RETENTION).")
    var deliveryFailuresRetention: String?

    @Option(help: "Keep parked messages this long: 14d; 0 for ever (env HERALD_PARKED_RETENTION).")
    var parkedRetention: String?

    @Option(help: "How often workers run retention, one at a time: 5m (env HERALD_RETENTION_INTERVAL).")
    var retentionInterval: String?

    func validate() throws {
        guard pruneBreakerShare > 0 && pruneBreakerShare <= 1 else {
            throw ValidationError("--prune-breaker-share must be above 0 and at most 1")
        }
        guard (1...1_000_000).contains(pruneBreakerMinimum) else {
            throw ValidationError("--prune-breaker-minimum must be 1 to 1000000")
        }
        guard (0...1_000_000).contains(planAhead) else {
            throw ValidationError("--plan-ahead must be 0 to 1000000")
        }
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.worker")
        var configuration = try WorkerCommand.configuration(
            services: services,
            appsFile: try Environment.value(appsFile, "HERALD_APPS_FILE", what: "--apps-file")
        )
        configuration.prefetch = prefetch
        configuration.batchPrefetch = batchPrefetch
        configuration.batchSize = batchSize
        configuration.planAhead = planAhead == 0 ? nil : planAhead
        configuration.connectionsPerApp = connections
        guard maxMessageBytes >= 1024 else { throw ValidationError("--max-message-bytes must be at least 1024") }
        guard (1...1000).contains(maxDeliveries) else { throw ValidationError("--max-deliveries must be 1 to 1000") }
        configuration.pruneBreakerShare = pruneBreakerShare
        configuration.pruneBreakerMinimum = pruneBreakerMinimum
        configuration.maximumMessageBytes = maxMessageBytes
        configuration.maximumDeliveries = maxDeliveries
        guard let type = Topology.QueueType(rawValue: queueType) else {
            throw ValidationError("--queue-type must be classic or quorum")
        }
        configuration.topology = Topology(prefix: queuePrefix, queueType: type)
        configuration.operationsHost = metricsHost ?? Environment.get("HERALD_METRICS_HOST") ?? "0.0.0.0"
        let port = metricsPort ?? Environment.get("HERALD_METRICS_PORT").flatMap(Int.init) ?? 9464
        configuration.operationsPort = port == 0 ? nil : port
        try applyRetention(to: &configuration, logger: logger)
        configuration.metricsRegistry = MetricsSetup.bootstrapOnce()
        let group = try buildWorker(configuration: configuration, logger: logger)
        try await group.run()
    }

    /// Sets the retention ages and interval from the flags, else the environment, else the defaults.
    func applyRetention(to configuration: inout WorkerConfiguration, logger: Logger) throws {
        configuration.idempotencyRetention = try RetentionAge.age(
            finishedJobsRetention, "HERALD_FINISHED_JOBS_RETENTION", flag: "--finished-jobs-retention",
            fallback: "7d")
        if let age = configuration.idempotencyRetention, age < .seconds(7 * 86_400) {
            // Allowed, since it was asked for: a job id then counts as new again sooner than the 7 days promised.
            logger.warning(
                "finished jobs are kept less than the 7-day idempotency window",
                metadata: ["retention": "\(RetentionAge.describe(age.components.seconds))"])
        }
        configuration.deadTokenRetention = try RetentionAge.age(
            deadTokensRetention, "HERALD_DEAD_TOKENS_RETENTION", flag: "--dead-tokens-retention", fallback: "90d")
        configuration.deliveryFailureRetention = try RetentionAge.age(
            deliveryFailuresRetention, "HERALD_DELIVERY_FAILURES_RETENTION", flag: "--delivery-failures-retention",
            fallback: "30d")
        configuration.parkedRetention = try RetentionAge.age(
            parkedRetention, "HERALD_PARKED_RETENTION", flag: "--parked-retention", fallback: "14d")
        configuration.retentionInterval = .seconds(
            try RetentionAge.seconds(
                retentionInterval, "HERALD_RETENTION_INTERVAL", flag: "--retention-interval", fallback: "5m",
                range: 10...86_400))
    }

    /// Reads the URLs and the apps file into a worker configuration, failing with errors that name the problem.
    static func configuration(services: ServiceOptions, appsFile: String) throws -> WorkerConfiguration {
        guard let data = FileManager.default.contents(atPath: appsFile) else {
            throw ValidationError("cannot read the apps file at \(appsFile)")
        }
        let apps = try AppsFile.parse(data)
        let directory = (appsFile as NSString).deletingLastPathComponent
        return WorkerConfiguration(
            amqp: try AMQPConfiguration(url: services.resolvedAMQPURL()),
            database: try DatabaseConfiguration(url: services.resolvedDatabaseURL()),
            apps: apps,
            appsDirectory: directory.isEmpty ? "." : directory
        )
    }
}
