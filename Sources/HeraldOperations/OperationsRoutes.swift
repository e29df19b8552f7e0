import Hummingbird
import NIOCore
import Prometheus

/// The operational endpoints every Herald process serves: `/metrics` (Prometheus text format),
/// `/health/live` (the process runs) and `/health/ready` (its dependencies answer).
///
/// One definition for the worker's `OperationsServer` and the API's router, so that probes, scrape configs and the
/// deploy files name the same paths for both.
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
