import ArgumentParser
import Foundation
import Logging
import Synchronization

/// Reading the process environment, in one place.
package enum Environment {
    /// The variable's value; nil when it is unset or empty.
    package static func get(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// The flag's value, else the environment variable's, else a clear error naming both.
    package static func value(_ flag: String?, _ variable: String, what: String) throws -> String {
        if let flag, !flag.isEmpty { return flag }
        if let value = get(variable) { return value }
        throw ValidationError("\(what) is required (or set \(variable))")
    }
}

/// The process's one logging bootstrap (only the executable bootstraps swift-log).
package enum LogSetup {
    private static let bootstrapped = Mutex(false)

    /// Bootstraps swift-log once: stderr, the given level (default info).
    package static func bootstrapOnce(level: String?) {
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
