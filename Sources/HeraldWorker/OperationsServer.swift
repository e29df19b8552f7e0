import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// Whether a process is ready to take work, as its health endpoint reports it.
public final class Readiness: Sendable {
    private let checks: @Sendable () async -> [String: Bool]

    /// - Parameter checks: named checks, each true when healthy (e.g. `amqp`, `postgres`).
    public init(_ checks: @escaping @Sendable () async -> [String: Bool]) {
        self.checks = checks
    }

    /// Runs the checks.
    public func evaluate() async -> [String: Bool] { await checks() }
}

/// The operational endpoints every Herald process serves: `/metrics` (Prometheus text format),
/// `/health/live` (the process runs) and `/health/ready` (its dependencies answer).
public enum OperationsRoutes {
    /// Adds the three routes to `router`.
    public static func add<Context: RequestContext>(
        to router: Router<Context>,
        registry: PrometheusCollectorRegistry,
        readiness: Readiness
    ) {
        router.get("/metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("/health/live") { _, _ -> Response in
            json(status: .ok, #"{"status":"live"}"#)
        }
        router.get("/health/ready") { _, _ -> Response in
            let results = await readiness.evaluate()
            let ready = results.values.allSatisfy { $0 }
            let checks = results.keys.sorted().map { #""\#($0)":\#(results[$0]! ? "true" : "false")"# }.joined(
                separator: ",")
            return json(
                status: ready ? .ok : .serviceUnavailable,
                #"{"status":"\#(ready ? "ready" : "not ready")","checks":{\#(checks)}}"#
            )
        }
    }

    static func json(status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The worker's HTTP server for metrics and health, as a `Service` (stopped last-but-one on SIGTERM).
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
