import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// An HTTP server for the operational routes alone (`OperationsRoutes`), as a `Service`: the worker's, which has no
/// other HTTP server (stopped last-but-one on SIGTERM).
public struct OperationsServer: Service {
    let application: Application<RouterResponder<BasicRequestContext>>

    /// - Parameters:
    ///   - host: address to bind, e.g. `0.0.0.0` in a container or `127.0.0.1`.
    ///   - port: 0 picks a free port (tests).
    public init(host: String, port: Int, registry: PrometheusCollectorRegistry, readiness: Readiness, logger: Logger) {
        let router = Router()
        OperationsRoutes.add(to: router, registry: registry, readiness: readiness)
        self.application = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            logger: logger
        )
    }

    public func run() async throws {
        // `run()`, not `runService()`: the latter wraps the server in a ServiceGroup of its own that traps SIGTERM
        // itself, stops at once and so ends this service before the outer group's drain reaches it (exit 1).
        try await application.run()
    }
}
