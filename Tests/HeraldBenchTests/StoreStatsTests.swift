import Foundation
import HeraldBench
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// The store queries only `herald bench pipeline` uses, against the PostgreSQL that `make test` starts.
@Suite(.needsServices) struct StoreStatsTests {
    /// What `herald bench pipeline` reads: the jobs of one id prefix, their latency from publish to result, and
    /// when the last result was written (the end of a run).
    @Test func jobLatencyCoversThePrefixAndGivesTheLastResultTime() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let before = Date().timeIntervalSince1970 * 1000
            let claim = try await store.claimSmallJobs(["run-1", "run-2", "other-1"].map { JobKey(app: "a", id: $0) }) {
                claimed in
                (
                    (),
                    claimed.map(\.id).map { id in
                        var counts = WriteBack(jobID: id, app: "a")
                        counts.targeted = 1
                        counts.sent = 1
                        return SmallJobRow(
                            id: id, app: "a", spec: "{}", publishedAt: Int64(before) - 2_000, tokenCount: 1,
                            done: counts)
                    }
                )
            }
            guard case .delivered = claim else {
                Issue.record("the claim was not made")
                return
            }
            let after = Date().timeIntervalSince1970 * 1000
            let summary = try await store.jobLatency(app: "a", idPrefix: "run-")
            #expect(summary.count == 2)
            #expect(summary.p50Milliseconds >= 1_990 && summary.p50Milliseconds <= after - before + 2_010)
            #expect(summary.lastResultMilliseconds >= before - 5 && summary.lastResultMilliseconds <= after + 5)
        }
    }
}
