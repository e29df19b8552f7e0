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
    @OptionGroup var retention: RetentionOptions
    @OptionGroup var webhooks: WebhookOptions

    /// Finished jobs kept for less than this break the promise that a job id is not taken again for 7 days.
    static let idempotencyWindow: Duration = .seconds(7 * 86_400)

    func run() async throws {
        let settings = try services.resolve(
            Self.keys, required: Self.requiredKeys, with: [queues, apps, worker, retention, webhooks])
        let logger = ServiceOptions.makeLogger(label: "herald.worker", configuration: settings)
        var configuration = try WorkerCommand.configuration(settings)
        if let age = configuration.idempotencyRetention, age < Self.idempotencyWindow {
            // Allowed, since it was asked for: a job id then counts as new again sooner than the 7 days promised.
            logger.warning(
                "finished jobs are kept less than the 7-day idempotency window",
                metadata: [
                    "retention": "\(ConfigurationValue.renderPeriod(age))",
                    "from": "\(settings.source(of: .finishedJobsRetention))",
                ])
        }
        configuration.metricsRegistry = MetricsSetup.bootstrapOnce()
        try await refuseUnusableDatabase(configuration.database, logger: logger)
        let group = try buildWorker(configuration: configuration, logger: logger)
        do {
            try await group.run()
        } catch {
            throw AddressInUse.explain(
                error, what: "the worker's metrics and health server", host: configuration.operationsHost,
                port: configuration.operationsPort ?? 0, setting: AddressInUse.setting(.metricsPort),
                source: "\(settings.source(of: .metricsPort))")
        }
    }
}
