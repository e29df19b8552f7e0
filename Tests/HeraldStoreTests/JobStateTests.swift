import HeraldStore
import HeraldTestSupport
import Logging
import Testing

/// A job's final states are named once in SQL (`herald_job_is_final`, schemas/012) and once in Swift
/// (`JobState.isFinal`): the two must agree on every state.
@Suite struct JobStateTests {
    @Test func sqlAndSwiftAgreeOnWhichStatesAreFinal() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for state in JobState.allCases {
                let rows = try await store.client.query(
                    "SELECT herald_job_is_final(\(state.rawValue))", logger: Logger(label: "test"))
                var final: Bool? = nil
                for try await value in rows.decode(Bool.self) { final = value }
                #expect(final == state.isFinal, "\(state)")
            }
        }
    }
}

/// The small-job claim's existence check can only probe the primary key by id (schemas/013): a generic plan cached at a
/// session's first claim, made while `jobs` was nearly empty, walked every job of the app per claimed id for the
/// session's life. `QueryPlanTests` holds the probe's plan under worst-case statistics.
@Suite struct ClaimPlanTests {
    @Test func theClaimKeepsItsGenericPlanWithoutSequentialScans() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let rows = try await store.client.query(
                """
                SELECT unnest(proconfig) FROM pg_proc
                WHERE proname = 'herald_claim_small_jobs' AND pronargs = 3
                """, logger: Logger(label: "test"))
            var settings: Set<String> = []
            for try await setting in rows.decode(String.self) { settings.insert(setting) }
            #expect(settings == ["enable_seqscan=off", "enable_bitmapscan=off", "plan_cache_mode=force_generic_plan"])
        }
    }
}
