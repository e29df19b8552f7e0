import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// The statements the planner and the deliverer run per page and per batch use their indexes whatever the
/// statistics say. Each test takes the worst cases: tables analysed while empty (the planner believes they are
/// empty) or while they held a few rows of another app (a demo, a purge), then filled without analysing, as after a
/// bulk import. The plans are PostgreSQL's own: `EXPLAIN (FORMAT JSON)` of the store's statements with
/// representative parameters, and the generic plans of its prepared statements and of the PL/pgSQL functions'
/// statements, read from `pg_proc` as the migrations left them.
@Suite(.needsServices) struct QueryPlanTests {
    static let app = "a"
    static let devices = 20_000
    static let smallJobs = 20_000
    static let broadcastBatches = 400
    static let logger = {
        var logger = Logger(label: "query-plans")
        logger.logLevel = .warning
        return logger
    }()

    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "a1" + String(repeating: "0", count: 62 - hex.count) + hex
    }

    /// What the statistics say when the tables are filled.
    enum Statistics: CaseIterable, CustomTestStringConvertible {
        /// Analysed while empty: no statistics of any column.
        case empty
        /// Analysed while they held ten rows of app "demo": app "a" is, as far as the planner knows, absent.
        case aFewRowsOfAnotherApp

        var testDescription: String { self == .empty ? "analysed empty" : "analysed with a few rows of another app" }
    }

    @Test(arguments: Statistics.allCases)
    func batchStatementsProbeTheirIndexesWhateverTheStatisticsSay(_ statistics: Statistics) async throws {
        try await Self.withWorstCase(statistics) { store in
            let broadcast = BatchKey(app: Self.app, job: "broadcast", seq: 7, attempt: 1)
            let small = BatchKey(app: Self.app, job: "small-42", seq: 0, attempt: 1)
            let completions = [broadcast, small].map {
                BatchCompletion(key: $0, writeBack: WriteBack(jobID: $0.job, app: $0.app), retry: nil)
            }
            let planned = Store.recordPlannedQueries(
                BatchKey(app: Self.app, job: "broadcast", seq: Self.broadcastBatches, attempt: 1),
                cursor: Self.token(9_000))
            let cases: [(String, PostgresQuery, PlanExpectation)] = [
                (
                    "beginBatch", Store.beginBatchQuery(broadcast),
                    .init(indexes: [PlanExpectation.job, ["batches_pkey"]])
                ),
                ("complete: claim", Store.claimBatchesQuery(completions), .init(indexes: [["batches_pkey"]])),
                (
                    "complete: pruned", Store.batchPrunedQuery(broadcast, pruned: 3),
                    .init(indexes: [["batches_pkey"]])
                ),
                (
                    "complete: retries",
                    Store.retryBatchesQuery([BatchKey(app: Self.app, job: "broadcast", seq: 7, attempt: 2)]),
                    .init()
                ),
                (
                    "complete: counts", Store.addCountsQuery(completions.map(\.writeBack)),
                    .init(indexes: [PlanExpectation.job])
                ),
                ("recordPlanned: batch", planned.batch, .init()),
                ("recordPlanned: cursor", planned.cursor, .init(indexes: [PlanExpectation.job])),
            ]
            for (name, query, expected) in cases {
                let plan = try await Self.explain(query, on: store)
                Self.check(name, plan, expected)
            }
        }
    }

    @Test(arguments: Statistics.allCases)
    func audiencePagesWalkTheirIndexAfterAnImport(_ statistics: Statistics) async throws {
        try await Self.withWorstCase(statistics) { store in
            let (after, through) = (Self.token(100), Self.token(600))
            // All and topic pages walk devices_pkey in token order with the statistics an import leaves: the
            // import analyses the table as its last step (`Store.analyzeDevices`, `herald devices import`).
            try await store.analyzeDevices()
            // The planner's pages are open-ended (after the cursor, up to a page): they must walk the index in
            // order and stop, never read the rest of the app and sort it.
            let walks: [(String, PostgresQuery)] = [
                ("planner: all", Store.devicesPageBoundaryQuery(app: Self.app, filter: .all, after: after, limit: 500)),
                (
                    "planner: topic",
                    Store.devicesPageBoundaryQuery(app: Self.app, filter: .topic("news"), after: nil, limit: 500)
                ),
            ]
            for (name, query) in walks {
                let plan = try await Self.explain(query, on: store)
                Self.check(name, plan, PlanExpectation(indexes: [["devices_pkey"]], ordered: true))
            }
            // The deliverer's pages are bounded by their batch's range (after < token <= through): whatever the
            // plan (an ordered walk, or the range's rows read and sorted), it reads that range of devices_pkey only.
            let ranges: [(String, PostgresQuery)] = [
                (
                    "deliverer: all",
                    Store.devicesPageQuery(
                        app: Self.app, filter: .all, after: after, through: through, limit: 501, withDetails: false)
                ),
                (
                    "deliverer: topic in French",
                    Store.devicesPageQuery(
                        app: Self.app, filter: .locales(.topic("news"), ["fr"]), after: after, through: through,
                        limit: 501, withDetails: true)
                ),
            ]
            for (name, query) in ranges {
                let plan = try await Self.explain(query, on: store)
                let devicesReads = plan.all.filter { $0.relationName == "devices" || $0.indexName == "devices_pkey" }
                #expect(!devicesReads.contains { $0.nodeType == "Seq Scan" }, "\(name): \(plan.outline)")
                #expect(
                    devicesReads.contains {
                        $0.indexName == "devices_pkey" && ($0.indexCondition ?? "").contains("<=")
                    },
                    "\(name): the read is not bounded by the batch's range: \(plan.outline)")
            }
            // A users page reads each user's devices in token order, then sorts those: a handful of rows.
            let users: [(String, PostgresQuery)] = [
                (
                    "planner: users",
                    Store.devicesPageBoundaryQuery(
                        app: Self.app, filter: .users(["u1", "u2", "u1"]), after: nil, limit: 500)
                ),
                (
                    "deliverer: users",
                    Store.devicesPageQuery(
                        app: Self.app, filter: .users(["u1", "u2"]), after: after, through: Self.token(19_000),
                        limit: 501, withDetails: true)
                ),
            ]
            for (name, query) in users {
                let plan = try await Self.explain(query, on: store)
                Self.check(name, plan, PlanExpectation(indexes: [["devices_by_user"]]))
            }
        }
    }

    @Test(arguments: Statistics.allCases)
    func theStaleListingWalksTheAndroidIndexInOrder(_ statistics: Statistics) async throws {
        try await Self.withWorstCase(statistics) { store in
            // 2,000 Android devices beside the 20,000 iOS ones, not analysed: the listing (`herald devices stale`)
            // reads the partial index of Android devices by registration time from its cursor, in order.
            try await store.client.query(
                """
                INSERT INTO devices (app_id, token, platform, fcm_kind, registered_at)
                SELECT \(Self.app), 'and-' || lpad(to_hex(i), 20, '0'), 'android', 'token',
                       now() - (i % 300) * interval '1 day'
                FROM generate_series(1, 2000) AS i
                """,
                logger: Self.logger)
            let cutoff = try await store.staleCutoff(olderThan: .seconds(30 * 86_400))
            let pages: [(String, StaleDeviceCursor?)] = [
                ("first page", nil),
                ("next page", StaleDeviceCursor(registeredAt: cutoff - 86_400_000_000, token: "and-")),
            ]
            for (name, cursor) in pages {
                let query = Store.staleDevicesPageQuery(
                    app: Self.app, registeredBefore: cutoff, after: cursor, limit: 500)
                let plan = try await Self.explain(query, on: store)
                Self.check(
                    "stale devices, \(name)", plan,
                    PlanExpectation(indexes: [["devices_android_by_registration"]], ordered: true))
            }
        }
    }

    @Test(arguments: Statistics.allCases)
    func theSchedulersPollsReadOnlyTheJobsTheyWantWhateverTheStatisticsSay(_ statistics: Statistics) async throws {
        try await Self.withWorstCase(statistics) { store in
            // The running broadcast's planning is paused; 20,000 finished jobs are not.
            try await store.client.query(
                "UPDATE jobs SET plan_resume_below = 100 WHERE app_id = \(Self.app) AND id = 'broadcast'",
                logger: Self.logger)
            let poll = Store.pausedPlanningPoll(limit: 100)
            let plan = try await Self.explain(poll.query, settings: poll.settings, on: store)
            Self.check(
                "resumePausedPlanning", plan,
                PlanExpectation(indexes: [["batches_pending", "batches_pkey"]], wholeIndexes: ["jobs_planning_paused"]))
            // The other poll, for scheduled jobs that are due, reads them through their partial index.
            let due = try await Self.explain(Store.dueJobsQuery(limit: 100), on: store)
            Self.check("releaseDueJobs", due, PlanExpectation(wholeIndexes: ["jobs_due"]))
        }
    }

    @Test(arguments: Statistics.allCases)
    func smallJobStatementsProbeTheirIndexesInTheirGenericPlans(_ statistics: Statistics) async throws {
        try await Self.withWorstCase(statistics) { store in
            let claim = try await Self.genericPlans(ofFunction: "herald_claim_small_jobs", on: store)
            #expect(claim.count == 2, "the locks, then the existence check")
            for (index, plan) in claim.enumerated() {
                let expected = PlanExpectation(indexes: index == 1 ? [["jobs_pkey"]] : [])
                Self.check("herald_claim_small_jobs, statement \(index + 1)", plan, expected)
            }
            // Every way `herald_end_jobs` (schemas/031) ends jobs, in the order of its RETURN QUERY statements.
            let ends = try await Self.genericPlans(ofFunction: "herald_end_jobs", on: store)
            let expectations: [(String, PlanExpectation)] = [
                ("group", PlanExpectation()),
                ("counted", PlanExpectation(indexes: [PlanExpectation.job, ["batches_pkey"]])),
                ("complete", PlanExpectation(indexes: [PlanExpectation.job, ["batches_pending"], ["batches_pkey"]])),
                ("stop", PlanExpectation(indexes: [PlanExpectation.job])),
                ("reject", PlanExpectation()),
                ("record", PlanExpectation()),
            ]
            #expect(ends.count == expectations.count, "a new way to end jobs: add its expected plan")
            for ((way, expected), plan) in zip(expectations, ends) {
                Self.check("herald_end_jobs, \(way)", plan, expected)
            }
        }
    }
}

// MARK: - The worst case

extension QueryPlanTests {
    /// A fresh database whose tables were analysed as `statistics` says, then filled without analysing (autovacuum
    /// is off for them, so that it cannot analyse them during the test): 20,000 devices of app "a" (with users,
    /// topics and locales), 20,000 finished small jobs with a batch each, a few running ones without batch rows,
    /// and a running broadcast with 400 pending batches.
    static func withWorstCase(_ statistics: Statistics, _ body: (Store) async throws -> Void) async throws {
        try await TemporaryDatabase.withMigratedStore(logger: logger) { store, _ in
            for table in ["devices", "jobs", "batches"] {
                try await store.client.query(
                    PostgresQuery(unsafeSQL: "ALTER TABLE \(table) SET (autovacuum_enabled = off)"), logger: logger)
            }
            if statistics == .aFewRowsOfAnotherApp {
                try await store.client.query(
                    """
                    INSERT INTO devices (app_id, token) SELECT \("demo"), 'b2' || lpad(to_hex(i), 62, '0')
                    FROM generate_series(1, 10) AS i
                    """,
                    logger: logger)
                try await store.client.query(
                    """
                    INSERT INTO jobs (app_id, id, state, target_kind, planned, batches)
                    SELECT \("demo"), 'demo-' || i, 'done', 'tokens', true, 1 FROM generate_series(1, 10) AS i
                    """,
                    logger: logger)
                try await store.client.query(
                    """
                    INSERT INTO batches (app_id, job_id, seq, attempt, state)
                    SELECT \("demo"), 'demo-' || i, 0, 1, 'done' FROM generate_series(1, 10) AS i
                    """,
                    logger: logger)
            }
            try await store.client.query("VACUUM ANALYZE devices, jobs, batches", logger: logger)
            try await store.client.query(
                """
                INSERT INTO devices (app_id, token, user_id, locale, topics)
                SELECT \(app), 'a1' || lpad(to_hex(i), 62, '0'), 'u' || (i % 1000),
                       CASE WHEN i % 3 = 0 THEN 'fr-CA' ELSE 'en' END,
                       CASE WHEN i % 2 = 0 THEN ARRAY['news'] ELSE '{}' END
                FROM generate_series(0, \(devices - 1)) AS i
                """,
                logger: logger)
            try await store.client.query(
                """
                INSERT INTO jobs (app_id, id, state, target_kind, planned, batches, started_at, finished_at)
                SELECT \(app), 'small-' || i, 'done', 'tokens', true, 1, now(), now()
                FROM generate_series(1, \(smallJobs)) AS i
                """,
                logger: logger)
            try await store.client.query(
                """
                INSERT INTO batches (app_id, job_id, seq, attempt, state, completed_at)
                SELECT \(app), 'small-' || i, 0, 1, 'done', now() FROM generate_series(1, \(smallJobs)) AS i
                """,
                logger: logger)
            try await store.client.query(
                """
                INSERT INTO jobs (app_id, id, state, target_kind, planned, batches, started_at)
                SELECT \(app), 'running-' || i, 'running', 'tokens', true, 1, now() FROM generate_series(1, 100) AS i
                UNION ALL
                SELECT \(app), 'broadcast', 'running', 'all', false, \(broadcastBatches), now()
                """,
                logger: logger)
            try await store.client.query(
                """
                INSERT INTO batches (app_id, job_id, seq, attempt, state)
                SELECT \(app), 'broadcast', s, 1, 'pending' FROM generate_series(0, \(broadcastBatches - 1)) AS s
                """,
                logger: logger)
            try await body(store)
        }
    }
}
