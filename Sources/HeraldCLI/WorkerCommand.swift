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
    @OptionGroup var queues: QueueOptions
    @OptionGroup var apps: AppsFileOptions
    @OptionGroup var worker: WorkerOptions

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

    func run() async throws {
        let settings = try services.resolve(Self.keys, required: Self.requiredKeys, with: [queues, apps, worker])
        let logger = ServiceOptions.makeLogger(label: "herald.worker", configuration: settings)
        var configuration = try WorkerCommand.configuration(settings)
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
}
