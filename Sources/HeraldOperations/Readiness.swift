/// Whether a process is ready to take work, as its health endpoint reports it.
///
/// Each process names its own checks (the worker: its consumers are running; the API: the broker and the database
/// answer), so the routes stay the same everywhere and only the checks differ.
public final class Readiness: Sendable {
    private let checks: @Sendable () async -> [String: Bool]

    /// - Parameter checks: named checks, each true when healthy (e.g. `amqp`, `postgres`).
    public init(_ checks: @escaping @Sendable () async -> [String: Bool]) {
        self.checks = checks
    }

    /// Runs the checks.
    public func evaluate() async -> [String: Bool] { await checks() }
}
