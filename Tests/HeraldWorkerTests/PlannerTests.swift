import APNSCore
import HeraldCore
import HeraldStore
import Logging
import Synchronization
import Testing

@testable import HeraldWorker

/// Planning against a fake store and publisher: batches cover the audience once, in order, from any cursor; a job
/// of one batch is handed back to deliver here; a job stopped meanwhile stops planning. No services.
@Suite struct PlannerTests {
    /// An app's devices (sorted tokens) and what planning wrote.
    final class FakeStore: PlanningStore {
        struct State {
            var planned: [(BatchKey, String?)] = []
            var singleBatches: [BatchKey] = []
            var finishedPlanning = 0
            /// `resumeBelow` of each pause.
            var pauses: [Int] = []
            /// Batches recorded before the job is taken for stopped (recordPlanned answers false).
            var runningFor = Int.max
        }
        let tokens: [String]
        let state = Mutex(State())

        init(devices: Int, runningFor: Int = .max) {
            tokens = (0..<devices).map { String(format: "%064x", $0) }
            state.withLock { $0.runningFor = runningFor }
        }

        func devicesPageBoundary(app: String, filter: DeviceFilter, after: String?, limit: Int) async throws
            -> (count: Int, last: String?)
        {
            let page = tokens.lazy.filter { $0 > (after ?? "") }.prefix(limit)
            return (page.count, page.last)
        }

        func recordPlanned(_ key: BatchKey, cursor: String?) async throws -> Bool {
            state.withLock { state in
                state.planned.append((key, cursor))
                return state.planned.count <= state.runningFor
            }
        }

        func planSingleBatch(_ key: BatchKey, cursor: String?) async throws {
            state.withLock { $0.singleBatches.append(key) }
        }

        func finishPlanning(job: JobKey) async throws -> JobState? {
            state.withLock { $0.finishedPlanning += 1 }
            return nil
        }

        func pausePlanning(job: JobKey, resumeBelow: Int) async throws -> Bool {
            state.withLock { $0.pauses.append(resumeBelow) }
            return true
        }

        func databaseAnswers(within timeout: Duration) async -> Bool { true }
    }

    final class FakePublisher: BatchPublishing {
        let published = Mutex<[(batch: BatchMessage, priority: UInt8)]>([])
        func publish(_ batch: BatchMessage, priority: UInt8) async throws {
            published.withLock { $0.append((batch, priority)) }
        }
        var batches: [BatchMessage] { published.withLock { $0.map(\.batch) } }
        var priorities: [UInt8] { published.withLock { $0.map(\.priority) } }
    }

    static func job(_ target: String) throws -> PreparedJob {
        try PreparedJob.decode(
            Array(#"{"id":"j","app":"a","target":\#(target),"notification":{"aps":{"alert":"hi"}}}"#.utf8)
        ) { "j" }
    }

    static func planner(_ store: FakeStore, _ publisher: FakePublisher) -> Planner {
        Planner(
            store: store, publisher: publisher, batchSize: 1000, metrics: WorkerMetrics(), logger: Logger(label: "t"))
    }

    @Test func aBroadcastIsCutIntoBatchesThatCoverEveryDeviceOnce() async throws {
        let (store, publisher) = (FakeStore(devices: 2_500), FakePublisher())
        let step = try await Self.planner(store, publisher).plan(
            try Self.job(#"{"all":true}"#), cursor: nil, nextSeq: 0, planned: false)
        #expect(step == nil)
        let batches = publisher.batches
        #expect(batches.map(\.seq) == [0, 1, 2])
        #expect(batches.map(\.after) == [nil, store.tokens[999], store.tokens[1999]])
        #expect(batches.map(\.through) == [store.tokens[999], store.tokens[1999], store.tokens[2499]])
        // The cursor moves after each publish, never before.
        #expect(store.state.withLock { $0.planned.map(\.1) } == batches.map(\.through))
        #expect(store.state.withLock { $0.finishedPlanning } == 1)
    }

    /// A job's first four batches travel in the transactional lane, the rest in the bulk lane, each at its APNs
    /// priority's level (`Job.brokerPriority`).
    @Test(arguments: [(nil, 5, 2), (10, 5, 2), (5, 1, 0), (1, 1, 0)] as [(Int?, UInt8, UInt8)])
    func batchesCarryTheBrokerPriorityOfTheirJobsAPNsPriorityAndLane(apns: Int?, lead: UInt8, bulk: UInt8)
        async throws
    {
        let (store, publisher) = (FakeStore(devices: 5_500), FakePublisher())
        let priority = apns.map { #","priority":\#($0)"# } ?? ""
        let job = try PreparedJob.decode(
            Array(#"{"id":"j","app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"}\#(priority)}}"#.utf8)
        ) { "j" }
        _ = try await Self.planner(store, publisher).plan(
            job, cursor: nil, nextSeq: 0, planned: false)
        #expect(publisher.priorities == [lead, lead, lead, lead, bulk, bulk])
    }

    @Test func planningResumesFromItsCursorWithoutRepublishing() async throws {
        let (store, publisher) = (FakeStore(devices: 2_500), FakePublisher())
        _ = try await Self.planner(store, publisher).plan(
            try Self.job(#"{"all":true}"#), cursor: store.tokens[1999], nextSeq: 2, planned: false)
        #expect(publisher.batches.map(\.seq) == [2])
        #expect(publisher.batches.first?.after == store.tokens[1999])
    }

    @Test func aJobStoppedWhilePlanningPublishesNoMore() async throws {
        let (store, publisher) = (FakeStore(devices: 5_000, runningFor: 1), FakePublisher())
        _ = try await Self.planner(store, publisher).plan(
            try Self.job(#"{"all":true}"#), cursor: nil, nextSeq: 0, planned: false)
        // The second batch was published before its cursor was refused; none after it.
        #expect(publisher.batches.count == 2)
    }

    /// An audience is planned through the batches queue however small: whether it fits one batch is decided at
    /// intake (`Route`), where the audience is not known.
    @Test func anAudienceOfOnePageIsPublishedLikeAnyOther() async throws {
        let (store, publisher) = (FakeStore(devices: 10), FakePublisher())
        let planner = Self.planner(store, publisher)
        let job = try Self.job(#"{"all":true}"#)
        #expect(try await planner.plan(job, cursor: nil, nextSeq: 0, planned: false) == nil)
        let batch = BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, after: nil, through: store.tokens[9])
        #expect(publisher.batches == [batch])
        #expect(store.state.withLock { $0.planned.map(\.1) } == [store.tokens[9]])
        #expect(store.state.withLock { $0.finishedPlanning } == 1)
    }

    @Test func tokensArePlannedInChunksAndAJobOfOneBatchInOneStatement() async throws {
        let (store, publisher) = (FakeStore(devices: 0), FakePublisher())
        let planner = Self.planner(store, publisher)
        let many = (0..<2_500).map { "\"\(String(format: "%064x", $0))\"" }.joined(separator: ",")
        _ = try await planner.plan(
            try Self.job(#"{"tokens":[\#(many)]}"#), cursor: nil, nextSeq: 0, planned: false)
        #expect(publisher.batches.map { $0.tokens?.count } == [1000, 1000, 500])
        #expect(store.state.withLock { $0.planned.map(\.1) } == ["1000", "2000", "2500"])

        // Routed as one batch: planned in one statement and handed to its consumer, nothing published; a copy of
        // it planned before gets the same batch and plans nothing again.
        let one = try Self.job(#"{"tokens":["\#(String(format: "%064x", 7))"]}"#)
        let batch = try await planner.planOneBatch(one, planned: false)
        #expect(batch.tokens == [String(format: "%064x", 7)])
        #expect(store.state.withLock { $0.singleBatches } == [batch.key])
        #expect(try await planner.planOneBatch(one, planned: true) == batch)
        #expect(store.state.withLock { $0.singleBatches } == [batch.key])
        #expect(publisher.batches.count == 3)
        #expect(store.state.withLock { $0.finishedPlanning } == 1)
        // Deferred to a send rate its app took after routing: handed over to the batches queue after all.
        try await planner.handOver(batch, of: one)
        #expect(publisher.batches.last == batch && publisher.batches.count == 4)
    }

    @Test func aThrottledJobIsCutIntoBatchesOfAboutTheWindowsWorthAndNeverDeliveredHere() async throws {
        let (store, publisher) = (FakeStore(devices: 0), FakePublisher())
        let planner = Self.planner(store, publisher)
        let three = (0..<3).map { "\"\(String(format: "%064x", $0))\"" }.joined(separator: ",")
        // 2 s of 1/s: batches of 2; and even a job that fits in one batch goes through the batches queue, where
        // its batch may wait for its turn.
        let slow = try Self.job(#"{"tokens":[\#(three)]}"#)
        var throttled = slow
        throttled.throttlePerSecond = 1
        #expect(planner.devicesPerBatch(for: throttled) == 2)
        let step = try await planner.plan(throttled, cursor: nil, nextSeq: 0, planned: false)
        #expect(step == nil)
        #expect(publisher.batches.map { $0.tokens?.count } == [2, 1])
        throttled.throttlePerSecond = 10_000
        #expect(planner.devicesPerBatch(for: throttled) == 1000)
        #expect(planner.devicesPerBatch(for: slow) == 1000)
    }

    @Test func planningPausesAfterItsWindowAndGoesOnFromItsCursorWhenResumed() async throws {
        let (store, publisher) = (FakeStore(devices: 2_500), FakePublisher())
        var planner = Self.planner(store, publisher)
        planner.planAhead = 2
        let job = try Self.job(#"{"all":true}"#)
        // Two batches, then a pause until fewer than two are pending; the job is not finished.
        let first = try await planner.plan(job, cursor: nil, nextSeq: 0, planned: false)
        #expect(first == nil)
        #expect(publisher.batches.map(\.seq) == [0, 1])
        #expect(store.state.withLock { ($0.pauses, $0.finishedPlanning) } == ([2], 0))
        // The job message again (the scheduler resumed it): the last batch, from the cursor, and the end.
        let second = try await planner.plan(
            job, cursor: store.tokens[1999], nextSeq: 2, planned: false)
        #expect(second == nil)
        #expect(publisher.batches.map(\.seq) == [0, 1, 2])
        #expect(store.state.withLock { ($0.pauses, $0.finishedPlanning) } == ([2], 1))
    }

    @Test func aThrottledJobsWindowIsAboutThirtySecondsOfItsRate() throws {
        var planner = Self.planner(FakeStore(devices: 0), FakePublisher())
        planner.apps = AppsFile(apps: [
            AppConfiguration(
                id: "a", topic: "a", environment: .production, auth: .token(teamID: "T", keyID: "K", keyFile: "k"),
                maxPerSecond: 100)
        ])
        var job = try Self.job(#"{"all":true}"#)
        // The app's 100/s: batches of 200 (2 s), 15 of them.
        #expect(planner.devicesPerBatch(for: job) == 200 && planner.window(for: job) == 15)
        // A lower job rate wins: 1/s, batches of 2, 15 of them; never fewer than 2.
        job.throttlePerSecond = 1
        #expect(planner.devicesPerBatch(for: job) == 2 && planner.window(for: job) == 15)
        planner.apps = AppsFile(apps: [])
        job.throttlePerSecond = 100_000
        #expect(planner.devicesPerBatch(for: job) == 1000 && planner.window(for: job) == 3000)
        job.throttlePerSecond = nil
        #expect(planner.window(for: job) == nil)
    }
}
