import Logging
import PostgresNIO

extension PostgresConnection {
    /// Sets each of `settings` (name, value) for the current transaction only: `set_config(name, value, true)`, with
    /// both bound.
    package func setForTransaction(_ settings: [(String, String)], logger: Logger) async throws {
        for (setting, value) in settings {
            try await query("SELECT set_config(\(setting), \(value), true)", logger: logger)
        }
    }
}
