import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import Synchronization

/// What a group of small jobs needs of the database: the claim that sends inside it and writes the group's rows,
/// and the write of rows a claim could not make (the `Store`; a fake in tests).
protocol SmallJobClaiming: Sendable {
    func claimSmallJobs<Value: Sendable>(
        _ jobs: [JobKey],
        deliver: @escaping @Sendable (Set<JobKey>) async throws -> (Value, [SmallJobRow])
    ) async throws -> SmallJobClaim<Value>
    func writeSmallJobs(_ rows: [SmallJobRow]) async throws
}

extension Store: SmallJobClaiming {}

/// Commit for small-job groups: the group is claimed, sent and its rows written in one transaction
/// (`Store.claimSmallJobs`, whose claim holds each job's lock while its notifications are out, so that concurrent
/// copies of a job send once; decision 0011), then the exceptions are finished and every message acknowledged.
///
/// Once the group was sent, nothing sends it again: rows the claim's transaction could not write are written
/// afterwards (held through an outage), and what still fails is parked with its reason.
struct GroupCommit: Sendable {

    let store: any SmallJobClaiming
    let outages: OutageWaiter
    let logger: Logger
    /// Sends the jobs claimed and settles their answers (`DeliveryRun.sendGroup`); touches no database.
    let send: @Sendable ([RoutedJob]) async throws -> SentGroup
    /// Finishes what the send left running, once the rows are committed (`Commit.finishGroup`).
    let finish: @Sendable (SentGroup) async throws -> [JobKey: DeliveryOutcome]
    /// Acknowledges the messages of the jobs written, in delivery order.
    let acknowledge: @Sendable ([AMQPDelivery]) async -> Void
    /// Ends the message of a job that failed (`JobConsumer.fail`: parked with the reason).
    let fail: @Sendable (RoutedJob, any Error) async -> Void
    /// The one-by-one path (`JobConsumer.process`), for the jobs the group did not claim.
    let oneByOne: @Sendable (RoutedJob) async -> Void
    var onJobHandled: (@Sendable (JobEvent) -> Void)? = nil

    /// Delivers a group of small jobs: claims the new ones, sends them all and writes each one's row once, in one
    /// transaction; finishes the exceptions; then acknowledges each. Ids that exist already (or that another group
    /// holds), and a second copy of an id in the same group, take the one-by-one path after the group.
    func deliver(_ group: [RoutedJob]) async {
        let rest: [RoutedJob]
        let claim: SmallJobClaim<ClaimedGroup>
        let split = SplitRecord()
        do {
            claim = try await store.claimSmallJobs(group.map(\.job.key)) { [send] claimed in
                let (fast, others) = Self.split(group, claimed: claimed)
                split.record(Self.fastIndices(group, claimed: claimed))
                guard !fast.isEmpty else { return (ClaimedGroup(fast: fast, others: others), []) }
                let sent = try await send(fast)
                return (ClaimedGroup(fast: fast, others: others, sent: sent), sent.rows)
            }
        } catch {
            // Sending failed part-way (a retry batch could not be published): what was handed to the send is not
            // sent again, nor is a second copy of it; the jobs the group did not claim take the one-by-one path.
            let handed = Set((split.handed ?? []).map { group[$0].job.key })
            for item in group where handed.contains(item.job.key) {
                await fail(item, SentButNotSettled(underlying: error))
            }
            await takeOneByOne(group.filter { !handed.contains($0.job.key) })
            return
        }
        switch claim {
        case .notClaimed(let error):
            // Whatever went wrong, one by one each job fails (and is held through an outage) alone.
            logger.warning(
                "a group of small jobs could not be claimed, taking them one by one", metadata: ["error": "\(error)"])
            rest = group
        case .delivered(let group):
            rest = group.others
            await settle(group)
        case .deliveredNotWritten(let group, let rows, let error):
            rest = group.others
            logger.warning(
                "a sent group's rows were not written, writing them again", metadata: ["error": "\(error)"])
            let parked = await writeAlone(rows, of: group.fast)
            var written = group
            written.fast.removeAll { parked.contains($0.job.id) }
            written.sent.rows.removeAll { parked.contains($0.id) }
            written.sent.continuing.removeAll { parked.contains($0.key.job) }
            await settle(written)
        }
        await takeOneByOne(rest)
    }

    /// Duplicates, ids the API enqueued and redeliveries: the one-by-one path knows about each.
    private func takeOneByOne(_ items: [RoutedJob]) async {
        await withDiscardingTaskGroup { tasks in
            for item in items { tasks.addTask { await oneByOne(item) } }
        }
    }

    /// The positions in the group of the items a claim handed to its send, kept for when the send throws.
    private final class SplitRecord: Sendable {
        private let state = Mutex<[Int]?>(nil)
        func record(_ handed: [Int]) { state.withLock { $0 = handed } }
        var handed: [Int]? { state.withLock { $0 } }
    }

    /// The group's items this group delivers (claimed, first copy of each id) and the others, each in order.
    static func split(_ group: [RoutedJob], claimed: Set<JobKey>) -> (fast: [RoutedJob], others: [RoutedJob]) {
        var fast: [RoutedJob] = []
        var others: [RoutedJob] = []
        var taken = Set<JobKey>()
        for item in group {
            let key = item.job.key
            if claimed.contains(key) && taken.insert(key).inserted {
                fast.append(item)
            } else {
                others.append(item)
            }
        }
        return (fast, others)
    }

    /// The positions of `split`'s `fast` items in `group`.
    static func fastIndices(_ group: [RoutedJob], claimed: Set<JobKey>) -> [Int] {
        var taken = Set<JobKey>()
        return group.indices.filter { claimed.contains(group[$0].job.key) && taken.insert(group[$0].job.key).inserted }
    }

    /// A claimed group: the jobs it sent, those left to the one-by-one path, and what was sent.
    struct ClaimedGroup: Sendable {
        var fast: [RoutedJob]
        var others: [RoutedJob]
        var sent = SentGroup()
    }

    /// Writes the rows of a sent group outside its claim (the claim's transaction rolled back): all in one
    /// statement, held through an outage; if that fails for good, row by row, so that only the job whose row is
    /// refused is parked. Returns the ids parked.
    private func writeAlone(_ rows: [SmallJobRow], of items: [RoutedJob]) async -> Set<String> {
        do {
            try await outages.untilDone("writing a sent group") { try await store.writeSmallJobs(rows) }
            return []
        } catch {
            logger.warning("writing the group's rows one by one", metadata: ["error": "\(error)"])
        }
        var parked = Set<String>()
        for row in rows {
            do {
                try await outages.untilDone("writing a sent job") { try await store.writeSmallJobs([row]) }
            } catch {
                parked.insert(row.id)
                for item in items where item.job.id == row.id {
                    await fail(item, SentButNotSettled(underlying: error))
                }
            }
        }
        return parked
    }

    /// Finishes a sent group whose rows are written (dead tokens, failures, retries, stops) and acknowledges it.
    private func settle(_ group: ClaimedGroup) async {
        let outcomes: [JobKey: DeliveryOutcome]
        do {
            outcomes = try await outages.untilDone("finishing a group of small jobs") { try await finish(group.sent) }
        } catch {
            for item in group.fast { await fail(item, SentButNotSettled(underlying: error)) }
            return
        }
        await acknowledge(group.fast.map(\.delivery))
        if let onJobHandled {
            for item in group.fast {
                if case .completed(let finished?) = outcomes[item.job.key] {
                    onJobHandled(.finished(app: item.job.app, id: item.job.id, state: finished))
                }
            }
        }
    }
}
