import Metrics
import Prometheus
import Synchronization

/// The process's one metrics bootstrap: swift-metrics into a Prometheus registry that `/metrics` serves.
enum MetricsSetup {
    private static let registry = Mutex<PrometheusCollectorRegistry?>(nil)

    /// Bootstraps swift-metrics once and returns the registry.
    static func bootstrapOnce() -> PrometheusCollectorRegistry {
        registry.withLock { existing in
            if let existing { return existing }
            let created = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: created))
            existing = created
            return created
        }
    }
}
