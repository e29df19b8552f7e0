import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import Synchronization

/// Reading the process environment, in one place.
enum Environment {
    static func get(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// The flag's value, else the environment variable's, else a clear error naming both.
    static func value(_ flag: String?, _ variable: String, what: String) throws -> String {
        if let flag, !flag.isEmpty { return flag }
        if let value = get(variable) { return value }
        throw ValidationError("\(what) is required (or set \(variable))")
    }
}

/// The process's one logging bootstrap (only the executable bootstraps swift-log).
enum LogSetup {
    private static let bootstrapped = Mutex(false)

    /// Bootstraps swift-log once: stderr, the given level (default info).
    static func bootstrapOnce(level: String?) {
        let parsed = level.flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        bootstrapped.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = parsed
                return handler
            }
        }
    }
}

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
