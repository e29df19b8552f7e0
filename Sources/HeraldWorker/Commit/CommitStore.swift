import HeraldCore
import HeraldStore

/// What commit needs of PostgreSQL, and nothing more: `Store` is it; the delivery run's fast tests use a fake.
protocol CommitStore: Sendable {
    func complete(_ key: BatchKey, with writeBack: WriteBack, retry: BatchKey?) async throws
        -> (pruned: Int, jobFinished: JobState?)?
    func completeSmallJobs(_ completions: [BatchCompletion]) async throws -> CompletedBatches
    func failJob(_ job: JobKey, reason: String) async throws -> Bool
    func commitSlice(_ slice: SliceCommit) async throws -> Bool
    func databaseAnswers(within timeout: Duration) async -> Bool
}

extension Store: CommitStore {}
