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
/// cancelled as superseded). So a burst of score updates behind a slow send goes out as its first and its last.
/// "Newer" is the event's timestamp (`aps.timestamp`, else the publish time), arrival order between equals: an older
/// event that comes late (a retry, a redelivery) is the one superseded, never the newer one that waits. A second
/// copy of a job already in hand or waiting (a redelivery, a producer publishing again) changes nothing and is
/// acknowledged. PostgreSQL's record of the newest event (`Store.resolveLiveActivity`) does the same across workers.
final class LiveActivityMailbox: Sendable {
    /// What to do with an offered job.
    enum Offer: Sendable {
        /// Nothing of the activity is in hand: run this job, then whatever `finished` hands back.
        case run(RoutedJob)
        /// It waits behind the job in hand.
        case queued
        /// One of two waiting jobs is superseded by the other, which waits.
        case superseded(RoutedJob, by: RoutedJob)
        /// A copy of a job in hand or waiting: acknowledge it, nothing else.
        case copy(RoutedJob)
    }

    private struct Slot {
        var inHand: String
        var waiting: RoutedJob?
    }

    private let slots = Mutex<[ActivityKey: Slot]>([:])

    func offer(_ item: RoutedJob, key: ActivityKey) -> Offer {
        slots.withLock { slots in
            guard var slot = slots[key] else {
                slots[key] = Slot(inHand: item.job.id, waiting: nil)
                return .run(item)
            }
            if item.job.id == slot.inHand || item.job.id == slot.waiting?.job.id { return .copy(item) }
            guard let waiting = slot.waiting else {
                slot.waiting = item
                slots[key] = slot
                return .queued
            }
            if Self.timestamp(of: item) < Self.timestamp(of: waiting) { return .superseded(item, by: waiting) }
            slot.waiting = item
            slots[key] = slot
            return .superseded(waiting, by: item)
        }
    }

    /// The job in hand is done: the one that waits, if any, is next; otherwise the activity leaves the mailbox.
    func finished(_ key: ActivityKey) -> RoutedJob? {
        slots.withLock { slots in
            guard let next = slots[key]?.waiting else {
                slots[key] = nil
                return nil
            }
            slots[key] = Slot(inHand: next.job.id, waiting: nil)
            return next
        }
    }

    /// The event's time in seconds: its `aps.timestamp`, else when it was published, else 0 (arrival order).
    static func timestamp(of item: RoutedJob) -> Int64 {
        item.job.liveActivity?.timestamp ?? item.publishedAt.map { $0 / 1000 } ?? 0
    }
}
