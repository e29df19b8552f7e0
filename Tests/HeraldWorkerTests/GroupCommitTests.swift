import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ
import Synchronization
import Testing

@testable import HeraldWorker

/// Group commit of small jobs against a fake claim: what a group sends, writes, acknowledges, fails and leaves to
/// the one-by-one path, when the claim works, is refused, or loses its commit after sending; and how the queue
/// forms groups. No services.
@Suite struct GroupCommitTests {
    /// The claim and write of `Store`, kept in memory: jobs in `held` exist already (or another group holds them);
    /// `writeSmallJobs` refuses for good any statement holding a row of `refused`.
    final class FakeClaimStore: SmallJobClaiming {
        enum Mode { case commits, refusesTheClaim, losesTheCommit }
        struct State {
            var committed: [String] = []
            var writes: [[String]] = []
        }
        let mode: Mode
        let held: Set<JobKey>
        let refused: Set<String>
        let state = Mutex(State())

        init(_ mode: Mode = .commits, held: Set<JobKey> = [], refused: Set<String> = []) {
            self.mode = mode
            self.held = held
            self.refused = refused
        }

        func claimSmallJobs<Value: Sendable>(
            _ jobs: [JobKey], deliver: @escaping @Sendable (Set<JobKey>) async throws -> (Value, [SmallJobRow])
        ) async throws -> SmallJobClaim<Value> {
            if mode == .refusesTheClaim { return .notClaimed(StoreError(.queryFailed, "the claim was refused")) }
            let (value, rows) = try await deliver(Set(jobs).subtracting(held))
            if mode == .losesTheCommit {
                return .deliveredNotWritten(value, rows, StoreError(.queryFailed, "the commit was lost"))
            }
            state.withLock { $0.committed += rows.map(\.id) }
            return .delivered(value)
        }

        func writeSmallJobs(_ rows: [SmallJobRow]) async throws {
            try state.withLock { state in
                state.writes.append(rows.map(\.id))
                if rows.contains(where: { refused.contains($0.id) }) {
                    var error = StoreError(.queryFailed, "a value was refused")
                    error.isTransient = false
                    throw error
                }
                state.committed += rows.map(\.id)
            }
        }
    }

    /// What the group did with each message, by job id.
    final class Recorder: Sendable {
        let state = Mutex(Record())
        func withLock<T>(_ body: (inout Record) -> T) -> T { state.withLock { body(&$0) } }
    }

    struct Record: Sendable {
        var sent: [[String]] = []
        var finished: [[String]] = []
        var acked: [String] = []
        var failed: [String: String] = [:]
        var oneByOne: [String] = []
        var announced: [String] = []
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String { "refused" }
    }

    /// A group commit over `store`, recording everything; `send` and `finish` fail when told to.
    static func commit(
        _ store: FakeClaimStore, record: Recorder, sendFails: Bool = false, finishFails: Bool = false
    ) -> GroupCommit {
        GroupCommit(
            store: store,
            outages: OutageWaiter(answers: { _ in true }, logger: Logger(label: "test")),
            logger: Logger(label: "test"),
            send: { items in
                let ids = items.map(\.job.id)
                record.withLock { $0.sent.append(ids) }
                if sendFails { throw Refused() }
                var sent = SentGroup()
                sent.rows = items.map { item in
                    var done = WriteBack(jobID: item.job.id, app: item.job.app)
                    done.sent = 1
                    return SmallJobRow(
                        id: item.job.id, app: item.job.app, spec: item.spec, publishedAt: 0, tokenCount: 1, done: done)
                }
                return sent
            },
            finish: { sent in
                record.withLock { $0.finished.append(sent.rows.map(\.id)) }
                if finishFails {
                    var error = StoreError(.queryFailed, "a value was refused")
                    error.isTransient = false
                    throw error
                }
                var outcomes: [JobKey: DeliveryOutcome] = [:]
                for row in sent.rows { outcomes[JobKey(app: row.app, id: row.id)] = .completed(jobFinished: .done) }
                return outcomes
            },
            acknowledge: { deliveries in
                record.withLock { $0.acked += deliveries.map { String(decoding: $0.body, as: UTF8.self) } }
            },
            fail: { item, error in record.withLock { $0.failed[item.job.id] = "\(error)" } },
            oneByOne: { item in record.withLock { $0.oneByOne.append(item.job.id) } },
            onJobHandled: { event in
                if case .finished(_, let id, .done) = event { record.withLock { $0.announced.append(id) } }
            }
        )
    }

    /// A small job's queue item; its message's body is its id, so that acknowledgements can be told apart.
    static func item(_ id: String, tag: UInt64 = 1) throws -> RoutedJob {
        let spec =
            #"{"id":"\#(id)","app":"a","target":{"tokens":["\#(String(repeating: "ab", count: 32))"]},"#
            + #""notification":{"aps":{"alert":"hi"}}}"#
        let job = try PreparedJob.decode(Array(spec.utf8)) { id }
        return RoutedJob(
            delivery: AMQPDelivery(body: Array(id.utf8), deliveryTag: tag, routingKey: "herald.jobs"), job: job,
            spec: spec, route: .smallGroup, publishedAt: nil)
    }

    /// `herald parked replay` recognises what was sent but not settled by this reason's beginning.
    @Test func aFailureAfterSendingIsParkedWithTheReasonReplayRecognises() {
        struct Lost: Error, CustomStringConvertible { var description: String { "ConnectionPoolError" } }
        #expect(SentButNotSettled(underlying: Lost()).description.hasPrefix(ParkedMessage.sentButNotSettled))
    }

    @Test func aClaimedGroupIsSentOnceWrittenAndAcknowledgedAndTheRestGoOneByOne() async throws {
        let store = FakeClaimStore(held: [JobKey(app: "a", id: "c")])
        let record = Recorder()
        let group = [try Self.item("a"), try Self.item("b"), try Self.item("a", tag: 3), try Self.item("c")]
        await Self.commit(store, record: record).deliver(group)
        let done = record.withLock { $0 }
        #expect(done.sent == [["a", "b"]])
        #expect(store.state.withLock { $0.committed } == ["a", "b"])
        #expect(done.finished == [["a", "b"]])
        #expect(done.acked == ["a", "b"])
        #expect(done.announced == ["a", "b"])
        // The second copy of a and the job that exists already: the one-by-one path decides about each.
        #expect(done.oneByOne.sorted() == ["a", "c"])
        #expect(done.failed.isEmpty)
    }

    @Test func aGroupThatCannotBeClaimedSendsNothingAndGoesOneByOne() async throws {
        let store = FakeClaimStore(.refusesTheClaim)
        let record = Recorder()
        await Self.commit(store, record: record).deliver([try Self.item("a"), try Self.item("b")])
        let done = record.withLock { $0 }
        #expect(done.sent.isEmpty && done.acked.isEmpty && done.failed.isEmpty)
        #expect(done.oneByOne.sorted() == ["a", "b"])
    }

    @Test func rowsOfALostCommitAreWrittenWithoutSendingAgainAndARefusedRowFailsOnlyItsJob() async throws {
        let store = FakeClaimStore(.losesTheCommit, refused: ["b"])
        let record = Recorder()
        await Self.commit(store, record: record).deliver([try Self.item("a"), try Self.item("b"), try Self.item("c")])
        let done = record.withLock { $0 }
        #expect(done.sent == [["a", "b", "c"]])
        // All at once first; refused for good, then row by row.
        #expect(store.state.withLock { $0.writes } == [["a", "b", "c"], ["a"], ["b"], ["c"]])
        #expect(store.state.withLock { $0.committed } == ["a", "c"])
        #expect(Array(done.failed.keys) == ["b"])
        #expect(done.failed["b"]?.hasPrefix("sent, but the outcome could not be written") == true)
        #expect(done.finished == [["a", "c"]])
        #expect(done.acked == ["a", "c"])
        #expect(done.oneByOne.isEmpty)
    }

    @Test func aSendThatFailsPartWayFailsEveryJobItSentAndSendsNothingAgain() async throws {
        let store = FakeClaimStore()
        let record = Recorder()
        await Self.commit(store, record: record, sendFails: true).deliver([try Self.item("a"), try Self.item("b")])
        let done = record.withLock { $0 }
        #expect(done.sent == [["a", "b"]])
        #expect(done.failed.keys.sorted() == ["a", "b"])
        #expect(done.failed.values.allSatisfy { $0.hasPrefix("sent, but") })
        #expect(done.acked.isEmpty && done.oneByOne.isEmpty && store.state.withLock { $0.committed }.isEmpty)
    }

    /// A failed group failed every job in it, those it never sent (not claimed) among them.
    @Test func aSendThatFailsLeavesTheJobsItDidNotSendToTheOneByOnePath() async throws {
        let store = FakeClaimStore(held: [JobKey(app: "a", id: "c")])
        let record = Recorder()
        let group = [try Self.item("a"), try Self.item("c"), try Self.item("a", tag: 3), try Self.item("b")]
        await Self.commit(store, record: record, sendFails: true).deliver(group)
        let done = record.withLock { $0 }
        #expect(done.sent == [["a", "b"]])
        // Both copies of a (its second copy must not be sent by the one-by-one path) and b, which were sent.
        #expect(done.failed.keys.sorted() == ["a", "b"])
        #expect(done.oneByOne == ["c"])
        #expect(done.acked.isEmpty)
    }

    @Test func aGroupThatCannotBeFinishedIsFailedNotAcknowledged() async throws {
        let store = FakeClaimStore()
        let record = Recorder()
        await Self.commit(store, record: record, finishFails: true).deliver([try Self.item("a"), try Self.item("b")])
        let done = record.withLock { $0 }
        #expect(store.state.withLock { $0.committed } == ["a", "b"])
        #expect(done.failed.keys.sorted() == ["a", "b"])
        #expect(done.acked.isEmpty && done.announced.isEmpty)
    }

    @Test func theQueueGroupsWhatArrivesWhileAGroupIsUnderWay() throws {
        let queue = SmallJobQueue(maximumRunners: 2, maximumGroup: 3)
        // The first job finds no group under way: its task delivers.
        #expect(queue.add(try Self.item("1")))
        #expect(queue.nextGroup()?.map(\.job.id) == ["1"])
        // Jobs arriving while that group is out wait for it, until a full group waits: then a second runner starts.
        #expect(!queue.add(try Self.item("2")))
        #expect(!queue.add(try Self.item("3")))
        #expect(queue.add(try Self.item("4")))
        // No third runner, however much waits.
        for id in 5...7 { #expect(!queue.add(try Self.item("\(id)"))) }
        #expect(queue.nextGroup()?.map(\.job.id) == ["2", "3", "4"])
        #expect(queue.nextGroup()?.map(\.job.id) == ["5", "6", "7"])
        // Each runner stops when nothing waits; then the next job starts one again.
        #expect(queue.nextGroup() == nil)
        #expect(queue.nextGroup() == nil)
        #expect(queue.add(try Self.item("8")))
    }
}
