import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import RabbitMQ

/// `herald api`: the HTTP API (devices, notifications, jobs, reports, health, metrics) until SIGTERM.
struct ApiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API: device registration, notifications, job status, reports, health and metrics.",
        discussion:
            "Every /v1 route needs a per-app key (herald keys create --app A --scope S) as Authorization: Bearer "
            + "<key>. SIGTERM drains and stops it; SIGHUP is logged and ignored."
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var queues: QueueOptions
    @OptionGroup var apps: AppsFileOptions
    @OptionGroup var api: APIOptions

    func run() async throws {
        let settings = try services.resolve(Self.keys, required: Self.requiredKeys, with: [queues, apps, api])
        let logger = ServiceOptions.makeLogger(label: "herald.api", configuration: settings)
        var configuration = try ApiCommand.configuration(settings)
        configuration.metricsRegistry = MetricsSetup.bootstrapOnce()
        logger.info(
            "api starting",
            metadata: [
                "host": "\(configuration.host)", "port": "\(configuration.port)", "amqp": "\(configuration.amqp)",
            ]
        )
        try await AddressInUse.checkFree(
            host: configuration.host, port: configuration.port, what: "the API",
            setting: AddressInUse.setting(.apiPort), source: "\(settings.source(of: .apiPort))")
        try await refuseUnusableDatabase(configuration.database, logger: logger)
        do {
            try await buildAPI(configuration: configuration, logger: logger).run()
        } catch {
            throw AddressInUse.explain(
                error, what: "the API", host: configuration.host, port: configuration.port,
                setting: AddressInUse.setting(.apiPort), source: "\(settings.source(of: .apiPort))")
        }
    }
}
