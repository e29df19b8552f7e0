import Foundation

extension Process {
    /// Starts the process and returns its exit status once it ends, waiting without blocking a thread (tests run
    /// many at once on the cooperative pool). Throws if it cannot be started.
    public func exitStatus() async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try run()
            } catch {
                terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }
}
