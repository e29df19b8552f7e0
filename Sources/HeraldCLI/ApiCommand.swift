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
        discussion: "Every /v1 route needs a per-app key (herald keys create --app A) as Authorization: Bearer <key>."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "Address to bind (env HERALD_API_HOST).")
    var host: String?

    @Option(help: "Port to listen on (env HERALD_API_PORT).")
    var port: Int?

    @Option(help: "Queue name prefix; must match the workers'.")
    var queuePrefix: String = Topology.defaultPrefix

    @Option(help: "Queue type of the work queues: classic or quorum; must match the workers'.")
    var queueType: String = "classic"

    @Option(help: "Largest request body accepted, in bytes.")
    var maximumBodySize: Int = 1 << 20

    @Option(
        help: """
            The apps file (env HERALD_APPS_FILE): the channel routes reach Apple with its keys; without it they \
            answer 503.
            """)
    var appsFile: String?

    func run() async throws {
        let logger = services.makeLogger(label: "herald.api")
        var configuration = APIConfiguration(
            amqp: try AMQPConfiguration(url: services.resolvedAMQPURL()),
            database: try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        )
        configuration.host = host ?? Environment.get("HERALD_API_HOST") ?? "127.0.0.1"
        configuration.port = port ?? Environment.get("HERALD_API_PORT").flatMap(Int.init) ?? 8080
        guard let type = Topology.QueueType(rawValue: queueType) else {
            throw ValidationError("--queue-type must be classic or quorum")
        }
        configuration.topology = Topology(prefix: queuePrefix, queueType: type)
        guard maximumBodySize > 0 else { throw ValidationError("--maximum-body-size must be positive") }
        configuration.maximumBodySize = maximumBodySize
        if let path = appsFile ?? Environment.get("HERALD_APPS_FILE") {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read the apps file at \(path)")
            }
            configuration.apps = try AppsFile.parse(data)
            let directory = (path as NSString).deletingLastPathComponent
            configuration.appsDirectory = directory.isEmpty ? "." : directory
        }
        configuration.metricsRegistry = MetricsSetup.bootstrapOnce()
        logger.info(
            "api starting",
            metadata: [
                "host": "\(configuration.host)", "port": "\(configuration.port)", "amqp": "\(configuration.amqp)",
            ]
        )
        try await buildAPI(configuration: configuration, logger: logger).run()
    }
}
