import APNSCore
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import Logging
import PushTransport
import RabbitMQ
import Synchronization
import Testing

@testable import HeraldWorker

/// The delivery run, prepare → send → settle → commit, for a planned batch (one unit) and a group of small jobs (N),
/// against fakes of the store, the APNs transport and the broker, on a clock whose waits take no time: what is
/// sent, what is written, what is retried, stopped, expired, deferred and parked. No services.
@Suite struct DeliveryRunTests {
    typealias FakeTransport = SenderTests.FakeTransport

    /// The store's side of a run: the batch's start and devices as configured, what commit writes recorded.
    final class FakeStore: DeliveryStore, CommitStore {
        struct State {
            var start: BatchStart
            var turn = ThrottleSlot.taken(wait: .zero)
            var completed: [(BatchKey, WriteBack, BatchKey?)] = []
            var completedSmall: [BatchCompletion] = []
            var failed: [(JobKey, String)] = []
            var slices: [SliceCommit] = []
        }
        let state: Mutex<State>

        init(start: BatchStart) { state = Mutex(State(start: start)) }

        func beginBatch(_ key: BatchKey) async throws -> BatchStart { state.withLock { $0.start } }
        func hasUnprovenDevices(app: String) async throws -> Bool { false }
        func commitSlice(_ slice: SliceCommit) async throws -> Bool {
            state.withLock { state in
                guard !state.completed.contains(where: { $0.0 == slice.key }) else { return false }
                state.slices.append(slice)
                return true
            }
        }
        func devices(app: String, tokens: [DeviceToken]) async throws -> [StoredDevice] {
            tokens.map { StoredDevice(token: $0, locale: nil, registeredAt: 0) }
        }
        func devicesPage(
            app: String, filter: DeviceFilter, after: String?, through: String?, limit: Int, withDetails: Bool,
            withSubscriptions: Bool
        ) async throws -> [StoredDevice] { [] }
        func takeTurn(job: JobKey, count: Int, jobRate: Int?, appRate: Int?, within window: Duration) async throws
            -> ThrottleSlot
        { state.withLock { $0.turn } }
        func incrementBadges(job: JobKey, tokens: [DeviceToken], by increment: Int) async throws -> [String: Int] {
            [:]
        }
        func pruneBreakerCounts(_ job: JobKey) async throws -> (answers: Int, suspect: Int) { (0, 0) }
        func unprovenDevices(app: String, tokens: [DeviceToken]) async throws -> Set<String> { [] }
        func complete(_ key: BatchKey, with writeBack: WriteBack, retry: BatchKey?) async throws
            -> (pruned: Int, jobFinished: JobState?)?
        {
            state.withLock { state in
                guard !state.completed.contains(where: { $0.0 == key }) else { return nil }
                state.completed.append((key, writeBack, retry))
                return (writeBack.prunes.count, retry == nil ? .done : nil)
            }
        }
        func completeSmallJobs(_ completions: [BatchCompletion]) async throws -> CompletedBatches {
            state.withLock { $0.completedSmall += completions }
            var result = CompletedBatches()
            for completion in completions {
                result.pruned[completion.key] = completion.writeBack.prunes.count
                if completion.retry == nil { result.finished[completion.key.jobKey] = .done }
            }
            return result
        }
        func failJob(_ job: JobKey, reason: String) async throws -> Bool {
            state.withLock { state in
                guard !state.failed.contains(where: { $0.0 == job }) else { return false }
                state.failed.append((job, reason))
                return true
            }
        }
        func databaseAnswers(within timeout: Duration) async -> Bool { true }
    }

    /// The broker's side: every publish (retry batches, parked devices and jobs) with its queue.
    final class FakePublisher: MessagePublishing {
        let published = Mutex<[(queue: String, body: [UInt8], properties: AMQPProperties)]>([])

        func publish(
            _ body: [UInt8], exchange: String, routingKey: String, properties: AMQPProperties, mandatory: Bool
        ) async throws {
            published.withLock { $0.append((routingKey, body, properties)) }
        }

        func bodies(to queue: String) -> [[UInt8]] {
            published.withLock { $0.filter { $0.queue == queue }.map(\.body) }
        }
    }

    /// One app, `a`, sent through `transport`; `gone` is not in the apps file.
    final class FakeApps: TransportLeasing {
        let transport: FakeTransport
        let app = AppConfiguration(
            id: "a", topic: "com.example.a", environment: .production,
            auth: .token(teamID: "T", keyID: "K", keyFile: "k"))
        let leases = Atomic(0)

        init(_ transport: FakeTransport) { self.transport = transport }

        func leaseTransports(_ app: String) -> TransportLease? {
            guard app == self.app.id else { return nil }
            leases.wrappingAdd(1, ordering: .relaxed)
            return TransportLease(app: self.app, byEnvironment: [:], standard: transport, token: 0)
        }
        func release(_ lease: TransportLease) { leases.wrappingSubtract(1, ordering: .relaxed) }
    }

    struct Fixture {
        let store: FakeStore
        let transport: FakeTransport
        let apps: FakeApps
        let publisher: FakePublisher
        let clock: MockClock
        let run: DeliveryRun
        var topology: Topology { run.configuration.topology }
    }

    static func fixture(
        start: BatchStart = .deliver(spec: spec(), publishedAt: 0, throttlePerSecond: nil), commitSlice: Int = 500,
        answer: @escaping @Sendable (String, Int) -> Result<APNSOutcome, TransportError> = { _, _ in
            SenderTests.outcome(200)
        }
    ) throws -> Fixture {
        let store = FakeStore(start: start)
        let transport = FakeTransport(answer: answer)
        let apps = FakeApps(transport)
        let publisher = FakePublisher()
        let clock = MockClock()
        var configuration = WorkerConfiguration(
            amqp: try AMQPConfiguration(url: "amqp://u:p@127.0.0.1:1/%2f"),
            database: try .init(url: "postgres://u:p@127.0.0.1:1/d"), apps: AppsFile(apps: [apps.app]),
            appsDirectory: "/")
        configuration.clock = clock.skipping
        configuration.maximumBatchAttempts = 3
        configuration.commitSlice = commitSlice
        let metrics = WorkerMetrics()
        let logger = Logger(label: "test")
        let commit = Commit(
            store: store, publisher: publisher, configuration: configuration, metrics: metrics, logger: logger,
            stoppedJobs: StoppedJobs())
        let run = DeliveryRun(
            store: store, apps: apps, configuration: configuration, commit: commit, metrics: metrics, logger: logger)
        return Fixture(store: store, transport: transport, apps: apps, publisher: publisher, clock: clock, run: run)
    }

    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    static func spec(id: String = "j", app: String = "a", tokens: Int = 3, from: Int = 0, extra: String = "") -> String
    {
        let list = (from..<from + tokens).map { "\"\(token($0))\"" }.joined(separator: ",")
        return #"{"id":"\#(id)","app":"\#(app)","target":{"tokens":[\#(list)]},"#
            + #""notification":{"aps":{"alert":"hi"}\#(extra)}}"#
    }

    static func batch(tokens: Int = 3, attempt: Int = 1) -> BatchMessage {
        BatchMessage(app: "a", job: "j", seq: 0, attempt: attempt, tokens: (0..<tokens).map(token))
    }

    @Test func aBatchIsSentSettledAndCompletedOnceWithItsCounts() async throws {
        let f = try Self.fixture()
        #expect(try await f.run.deliver(Self.batch()) == .completed(jobFinished: .done))
        #expect(f.transport.requests.count == 3)
        let completed = f.store.state.withLock { $0.completed }
        #expect(completed.count == 1)
        #expect(completed.first?.1.targeted == 3 && completed.first?.1.sent == 3 && completed.first?.2 == nil)
        #expect(f.apps.leases.load(ordering: .relaxed) == 0, "the app's lease is released")
        // A redelivery of a batch already done is not written again.
        #expect(try await f.run.deliver(Self.batch()) == .alreadyDone)
    }

    /// A batch goes out in slices, each committed before the next is sent; the last completes the batch and sends its
    /// retry with the transient failures the earlier slices held.
    @Test func aBatchIsCommittedInSlicesAndItsLastSliceCompletesIt() async throws {
        let f = try Self.fixture(
            start: .deliver(spec: Self.spec(tokens: 5), publishedAt: 0, throttlePerSecond: nil), commitSlice: 2
        ) { token, _ in
            token == Self.token(1) ? SenderTests.outcome(503, "ServiceUnavailable") : SenderTests.outcome(200)
        }
        #expect(try await f.run.deliver(Self.batch(tokens: 5)) == .completed(jobFinished: nil))
        let (slices, completed) = f.store.state.withLock { ($0.slices, $0.completed) }
        #expect(slices.map(\.settled) == [2, 2])
        #expect(slices.map(\.writeBack.targeted) == [2, 2] && slices.map(\.writeBack.sent) == [1, 2])
        #expect(slices.map(\.held) == [[Self.token(1)], []])
        #expect(slices.allSatisfy { $0.writeBack.retried == 0 })
        #expect(completed.count == 1 && completed[0].1.targeted == 1 && completed[0].1.sent == 1)
        // The held failure is retried with the batch's retry, and counted once there.
        #expect(completed[0].1.retried == 1 && completed[0].2 != nil)
        let retries = f.publisher.bodies(to: f.topology.retryQueue(after: 1))
        let retry = try JSONDecoder().decode(BatchMessage.self, from: Data(try #require(retries.first)))
        #expect(retry.tokens == [Self.token(1)])
        // Every device was sent once, and the books balance: 5 targeted, 4 sent, 1 retried.
        #expect(f.transport.requests.count == 5 + 1)  // the 503 was tried again in-process once
        let all = slices.map(\.writeBack) + completed.map(\.1)
        #expect(all.map(\.targeted).reduce(0, +) == 5 && all.map(\.sent).reduce(0, +) == 4)
    }

    /// A batch redelivered after a worker died sends only what the earlier delivery did not commit, and retries
    /// what it held.
    @Test func aRedeliveredBatchSendsOnlyWhatWasNotCommitted() async throws {
        let f = try Self.fixture(
            start: .deliver(
                spec: Self.spec(tokens: 5), publishedAt: 0, throttlePerSecond: nil,
                progress: BatchProgress(settled: 2, heldRetries: [Self.token(0)])),
            commitSlice: 2)
        #expect(try await f.run.deliver(Self.batch(tokens: 5)) == .completed(jobFinished: nil))
        #expect(Set(f.transport.requests) == Set((2..<5).map(Self.token)))
        let (slices, completed) = f.store.state.withLock { ($0.slices, $0.completed) }
        #expect(slices.map(\.settled) == [2])
        #expect(completed.first?.1.targeted == 1 && completed.first?.1.retried == 1)
        let retries = f.publisher.bodies(to: f.topology.retryQueue(after: 1))
        let retry = try JSONDecoder().decode(BatchMessage.self, from: Data(try #require(retries.first)))
        #expect(retry.tokens == [Self.token(0)])
    }

    @Test func transientFailuresGoToTheRetryQueueAsTheNextAttemptAndAreParkedAfterTheLast() async throws {
        let f = try Self.fixture { token, _ in
            token == Self.token(1) ? SenderTests.outcome(503, "ServiceUnavailable") : SenderTests.outcome(200)
        }
        #expect(try await f.run.deliver(Self.batch()) == .completed(jobFinished: nil))
        let retries = f.publisher.bodies(to: f.topology.retryQueue(after: 1))
        #expect(retries.count == 1)
        let retry = try JSONDecoder().decode(BatchMessage.self, from: Data(retries[0]))
        #expect(retry.attempt == 2 && retry.tokens == [Self.token(1)])
        let completed = f.store.state.withLock { $0.completed }
        #expect(completed.first?.2 == retry.key)
        #expect(completed.first?.1.sent == 2 && completed.first?.1.retried == 1)
        // The in-process retries waited on the clock, not in real time.
        #expect(f.clock.elapsed > .zero)

        // The last attempt parks what still fails, recorded as failures.
        #expect(try await f.run.deliver(Self.batch(attempt: 3)) == .completed(jobFinished: .done))
        #expect(f.publisher.bodies(to: f.topology.parked).count == 1)
        let last = f.store.state.withLock { $0.completed.last }
        #expect(last?.1.failures.map(\.token) == [DeviceToken(trustedHex: Self.token(1))])
    }

    @Test func aJobAPNsRejectsAsAWholeIsStoppedOnceAndParked() async throws {
        let f = try Self.fixture { _, _ in SenderTests.outcome(400, "BadTopic") }
        #expect(try await f.run.deliver(Self.batch()) == .completed(jobFinished: .failed))
        // The probe's answer stopped the rest: one request, not three.
        #expect(f.transport.requests.count == 1)
        let failed = f.store.state.withLock { $0.failed }
        #expect(failed.count == 1 && failed[0].1.contains("BadTopic"))
        #expect(f.publisher.bodies(to: f.topology.parked).count == 1)
        #expect(f.store.state.withLock { $0.completed.count } == 1)
    }

    @Test func anExpiredJobSendsNothingAndCountsItsDevicesExpired() async throws {
        // The clock starts at 1,800,000,000 s: an expiration a second before is past.
        let spec = Self.spec(extra: #","expiration":1799999999"#)
        let f = try Self.fixture(start: .deliver(spec: spec, publishedAt: 0, throttlePerSecond: nil))
        #expect(try await f.run.deliver(Self.batch()) == .completed(jobFinished: .done))
        #expect(f.transport.requests.isEmpty)
        #expect(f.store.state.withLock { $0.completed.first?.1.expired } == 3)
    }

    @Test func aThrottledBatchWhoseTurnIsFarOffIsDeferredUnsent() async throws {
        let f = try Self.fixture(start: .deliver(spec: Self.spec(), publishedAt: 0, throttlePerSecond: 1))
        f.store.state.withLock { $0.turn = .later(wait: .seconds(30)) }
        #expect(try await f.run.deliver(Self.batch()) == .deferred(.seconds(30)))
        #expect(f.transport.requests.isEmpty && f.store.state.withLock { $0.completed.isEmpty })
    }

    @Test func aThrottledBatchIsPacedOnTheClock() async throws {
        let f = try Self.fixture(start: .deliver(spec: Self.spec(), publishedAt: 0, throttlePerSecond: 1))
        #expect(try await f.run.deliver(Self.batch()) == .completed(jobFinished: .done))
        // 1/s: the three sends were due at 0, 1 and 2 s.
        #expect(f.clock.elapsed == .seconds(2))
        #expect(f.transport.requests.count == 3)
    }

    @Test func aBatchOfAStoppedJobOrAnAppGoneIsNotSent() async throws {
        let stopped = try Self.fixture(start: .jobStopped(.cancelled))
        #expect(try await stopped.run.deliver(Self.batch()) == .skipped(.cancelled))
        let gone = try Self.fixture(
            start: .deliver(spec: Self.spec(app: "gone"), publishedAt: 0, throttlePerSecond: nil))
        var batch = Self.batch()
        batch.app = "gone"
        #expect(try await gone.run.deliver(batch) == .completed(jobFinished: .failed))
        #expect(stopped.transport.requests.isEmpty && gone.transport.requests.isEmpty)
        #expect(gone.store.state.withLock { $0.failed.first?.1 } == "app gone is no longer in the apps file")
    }

    /// A group of N small jobs is one run: every job's notifications sent together, a plain job's row written done,
    /// a job with a dead token continued through the full write-back, an app that is gone stopped.
    @Test func aGroupOfSmallJobsIsOneRunOverItsUnits() async throws {
        let f = try Self.fixture { token, _ in
            token == Self.token(0) ? SenderTests.outcome(410, "Unregistered") : SenderTests.outcome(200)
        }
        func routed(_ id: String, app: String = "a", tokens: Int, from: Int) throws -> RoutedJob {
            let spec = Self.spec(id: id, app: app, tokens: tokens, from: from)
            return RoutedJob(
                delivery: AMQPDelivery(body: Array(spec.utf8), deliveryTag: 1, routingKey: "herald.jobs"),
                job: try PreparedJob.decode(Array(spec.utf8)) { id }, spec: spec, route: .smallGroup,
                publishedAt: 1_800_000_000_000)
        }
        let jobs = [
            try routed("dead", tokens: 1, from: 0), try routed("plain", tokens: 3, from: 1),
            try routed("x", app: "gone", tokens: 1, from: 9),
        ]
        let sent = try await f.run.sendGroup(jobs)
        #expect(f.transport.requests.count == 4)
        #expect(sent.rows.map(\.id).sorted() == ["dead", "plain", "x"])
        #expect(sent.rows.first { $0.id == "plain" }?.done?.sent == 3)
        #expect(sent.rows.first { $0.id == "dead" }?.done == nil)
        #expect(sent.continuing.map(\.key.job) == ["dead"])
        #expect(sent.appGone.map(\.id) == ["x"])

        let outcomes = try await f.run.commit.finishGroup(sent)
        #expect(f.store.state.withLock { $0.completedSmall.map(\.key.job) } == ["dead"])
        #expect(f.store.state.withLock { $0.failed.map(\.0.id) } == ["x"])
        #expect(outcomes[JobKey(app: "a", id: "dead")] == .completed(jobFinished: .done))
        #expect(outcomes[JobKey(app: "gone", id: "x")] == .completed(jobFinished: .failed))
    }
}
