/// The task executor a piece of work prefers, visible to the unstructured tasks it starts.
///
/// A task executor preference (`withTaskExecutorPreference`) passes to child tasks but not to unstructured ones
/// (`Task {}`), which run on the global executor: in `herald`, NIO's event loops (`main.swift`). Work that must
/// leave its task for a moment (a statement `Store` runs under its stall watchdog) starts its task with
/// `ExecutorPreference.current`, so that the deliverer's database work stays where the deliverer runs (see
/// `DispatchTaskExecutor`) instead of taking turns on the event loops that carry the APNs connections.
public enum ExecutorPreference {
    @TaskLocal public static var current: (any TaskExecutor)?

    /// Runs `body` preferring `executor` (nil: no preference), its child tasks and the unstructured tasks that
    /// ask for `current` with it.
    public static func with<T: Sendable>(
        _ executor: (any TaskExecutor)?,
        _ body: () async throws -> T
    ) async rethrows -> T {
        try await $current.withValue(executor) {
            try await withTaskExecutorPreference(executor) { try await body() }
        }
    }
}
