import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import Synchronization

/// An app's activity or channel: the key updates coalesce by.
struct ActivityKey: Sendable, Hashable {
    var app: String
    var key: LiveActivityJob.Key
}

/// Coalesces the updates and ends of one activity (or channel) that a worker holds at once: while one is being
/// resolved and sent, the newest that arrived since waits, and a newer one replaces it (the replaced job is
/// cancelled as superseded). So a burst of score updates behind a slow send goes out as its first and its last, in
/// the order the broker delivered them; PostgreSQL's record of the newest event (`Store.resolveLiveActivity`) does
/// the same across workers and for events that come back late (retries, redeliveries).
final class LiveActivityMailbox: Sendable {
    /// What to do with an offered job.
    enum Offer: Sendable {
        /// Nothing of the activity is in hand: run this job, then whatever `finished` hands back.
        case run(SmallJobQueue.Item)
        /// It waits behind the job in hand.
        case queued
        /// It waits behind the job in hand, replacing this older waiting one, which is superseded.
        case superseded(SmallJobQueue.Item)
    }

    private struct Slot {
        var waiting: SmallJobQueue.Item?
    }

    private let slots = Mutex<[ActivityKey: Slot]>([:])

    func offer(_ item: SmallJobQueue.Item, key: ActivityKey) -> Offer {
        slots.withLock { slots in
            guard var slot = slots[key] else {
                slots[key] = Slot(waiting: nil)
                return .run(item)
            }
            let older = slot.waiting
            slot.waiting = item
            slots[key] = slot
            return older.map { .superseded($0) } ?? .queued
        }
    }

    /// The job in hand is done: the one that waits, if any, is next; otherwise the activity leaves the mailbox.
    func finished(_ key: ActivityKey) -> SmallJobQueue.Item? {
        slots.withLock { slots in
            guard let next = slots[key]?.waiting else {
                slots[key] = nil
                return nil
            }
            slots[key] = Slot(waiting: nil)
            return next
        }
    }
}

extension JobConsumer {
    /// Ends a job that a newer event of its activity replaced while it waited: `cancelled`, with the newer job named,
    /// then acknowledged. A job that is already final is left as it is.
    func supersede(_ older: SmallJobQueue.Item, by newer: SmallJobQueue.Item, consumer: AMQPConsumer, logger: Logger)
        async
    {
        let job = older.job
        do {
            try await outages.untilDone("cancelling a superseded job") {
                try await store.endUnsentJob(
                    job.key, state: .cancelled, targetKind: job.audience.kind,
                    reason: "superseded: job \(newer.job.id) carries a newer event of \(job.liveActivity?.key?.description ?? "the activity")")
            }
        } catch {
            await fail(older.delivery, job: job, error: error, consumer: consumer, logger: logger)
            return
        }
        LiveActivityStage.count(job.liveActivity?.event ?? .update, priority: nil, why: "superseded")
        logger.info("Live Activity event superseded while it waited", metadata: ["newer_job": "\(newer.job.id)"])
        guard (try? await consumer.ack(older.delivery)) != nil else { return }
        configuration.onJobHandled?(.finished(app: job.app, id: job.id, state: .cancelled))
    }
}
