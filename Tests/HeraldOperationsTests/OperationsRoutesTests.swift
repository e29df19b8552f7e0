import Foundation
import HeraldOperations
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing

/// The routes every Herald process serves, on a router of their own (as the worker's `OperationsServer` has).
@Suite struct OperationsRoutesTests {
    static func application(registry: PrometheusCollectorRegistry = .init(), checks: [String: Bool])
        -> some ApplicationProtocol
    {
        let router = Router()
        OperationsRoutes.add(to: router, registry: registry, readiness: Readiness { checks })
        return Application(router: router)
    }

    @Test func liveAnswersWhateverTheChecksSay() async throws {
        try await Self.application(checks: ["postgres": false]).test(.router) { client in
            let response = try await client.execute(uri: "/health/live", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == #"{"status":"live"}"#)
        }
    }

    @Test(arguments: [
        (
            ["amqp": true, "postgres": true], HTTPResponse.Status.ok,
            #"{"status":"ready","checks":{"amqp":true,"postgres":true}}"#
        ),
        (
            ["postgres": false, "amqp": true], .serviceUnavailable,
            #"{"status":"not ready","checks":{"amqp":true,"postgres":false}}"#
        ),
    ])
    func readyIsOKOnlyWhenEveryCheckPassesAndListsThemSorted(
        _ checks: [String: Bool], _ status: HTTPResponse.Status, _ body: String
    ) async throws {
        try await Self.application(checks: checks).test(.router) { client in
            let response = try await client.execute(uri: "/health/ready", method: .get)
            #expect(response.status == status)
            #expect(response.headers[.contentType] == "application/json")
            #expect(String(buffer: response.body) == body)
        }
    }

    @Test func metricsServeTheRegistryInPrometheusTextFormat() async throws {
        let registry = PrometheusCollectorRegistry()
        let descriptor = MetricNameDescriptor(namespace: "herald", metricName: "test", unitName: "total", helpText: "")
        registry.makeCounter(descriptor: descriptor).increment(by: Int64(3))
        try await Self.application(registry: registry, checks: [:]).test(.router) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(String(buffer: response.body).contains("herald_test_total 3"))
        }
    }
}
