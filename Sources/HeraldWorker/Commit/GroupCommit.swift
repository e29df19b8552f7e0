import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ

/// Commit for small-job groups: the group is claimed, sent and its rows written in one transaction
/// (`Store.claimSmallJobs`, whose claim holds each job's lock while its notifications are out, so that concurrent
/// copies of a job send once), then the exceptions are finished and every message acknowledged.
extension JobConsumer {
    /// Delivers a group of small jobs: claims the new ones, sends them all and writes each one's row once, in one
    /// transaction (`Store.claimSmallJobs`); finishes the exceptions; then acknowledges each. Ids that exist
    /// already take the one-by-one path, after the group.
    ///
    /// Once the group was sent, nothing sends it again: rows the claim's transaction could not write are written
    /// afterwards (held through an outage), and what still fails is parked with its reason.
    func deliver(_ group: [SmallJobQueue.Item], consumer: AMQPConsumer) async {
        var rest: [SmallJobQueue.Item] = []
        let claim: SmallJobClaim<SentGroup>
        do {
            claim = try await store.claimSmallJobs(group.map(\.job.key)) { claimed in
                // A claimed job is delivered here once; a second message with the same app and id waits for the
                // one-by-one path.
                var fast: [SmallJobQueue.Item] = []
                var others: [SmallJobQueue.Item] = []
                var taken = Set<JobKey>()
                for item in group {
                    let key = item.job.key
                    if claimed.contains(key) && taken.insert(key).inserted {
                        fast.append(item)
                    } else {
                        others.append(item)
                    }
                }
                guard !fast.isEmpty else { return (SentGroup(fast: fast, others: others), []) }
                let sent = try await deliverer.sendSmallJobs(fast)
                return (SentGroup(fast: fast, others: others, sent: sent), sent.rows)
            }
        } catch {
            // Sending failed part-way (a retry batch could not be published): what was sent is not sent again.
            for item in group {
                await fail(
                    item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                    logger: logger)
            }
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
            await settle(group, consumer: consumer)
        case .deliveredNotWritten(let group, let rows, let error):
            rest = group.others
            logger.warning(
                "a sent group's rows were not written, writing them again", metadata: ["error": "\(error)"])
            let parked = await writeAlone(rows, of: group.fast, consumer: consumer)
            var written = group
            written.fast.removeAll { parked.contains($0.job.id) }
            written.sent.rows.removeAll { parked.contains($0.id) }
            written.sent.continuing.removeAll { parked.contains($0.key.job) }
            await settle(written, consumer: consumer)
        }
        // Duplicates, ids the API enqueued and redeliveries: the one-by-one path knows about each.
        await withDiscardingTaskGroup { tasks in
            for item in rest {
                tasks.addTask {
                    var logger = self.logger
                    logger[metadataKey: "job"] = "\(item.job.id)"
                    await process(item, consumer: consumer, logger: logger)
                }
            }
        }
    }

    /// A claimed group: the jobs it sent, those left to the one-by-one path, and what was sent.
    struct SentGroup: Sendable {
        var fast: [SmallJobQueue.Item]
        var others: [SmallJobQueue.Item]
        var sent = BatchDeliverer.SentSmallJobs()
    }

    /// Writes the rows of a sent group outside its claim (the claim's transaction rolled back): all in one
    /// statement, held through an outage; if that fails for good, row by row, so that only the job whose row is
    /// refused is parked. Returns the ids parked.
    private func writeAlone(_ rows: [SmallJobRow], of items: [SmallJobQueue.Item], consumer: AMQPConsumer) async
        -> Set<String>
    {
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
                    await fail(
                        item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                        logger: logger)
                }
            }
        }
        return parked
    }

    /// Finishes a sent group whose rows are written (dead tokens, failures, retries, stops) and acknowledges it.
    private func settle(_ group: SentGroup, consumer: AMQPConsumer) async {
        let outcomes: [JobKey: BatchDeliverer.Outcome]
        do {
            outcomes = try await outages.untilDone("finishing a group of small jobs") {
                try await deliverer.finishSmallJobs(group.sent)
            }
        } catch {
            for item in group.fast {
                await fail(
                    item.delivery, job: item.job, error: SentButNotSettled(underlying: error), consumer: consumer,
                    logger: logger)
            }
            return
        }
        try? await consumer.ack(group.fast.lazy.map(\.delivery))
        if let onJobHandled = configuration.onJobHandled {
            for item in group.fast {
                if case .completed(let finished?) = outcomes[item.job.key] {
                    onJobHandled(.finished(app: item.job.app, id: item.job.id, state: finished))
                }
            }
        }
    }
}
