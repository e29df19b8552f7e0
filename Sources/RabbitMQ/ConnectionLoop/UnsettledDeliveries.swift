/// The deliveries of one consumer channel that nobody has settled yet, so that the plain acks a loop turn collects
/// can go out as one `basic.ack` with `multiple` whenever every delivery below some tag is settled. A consumer that
/// finishes a group of jobs together then costs the broker one ack frame, not one per job.
///
/// Safety rests on `open` holding every delivery the channel received and nobody settled, handed out or not: a
/// `multiple` ack is only sent up to a tag below the oldest open delivery. A delivery never settled stays open and
/// only stops the coalescing; it is never acknowledged by it. Memory is bounded by the consumer's prefetch (the
/// broker sends no more unsettled deliveries than that), whatever a long-open delivery holds up behind it.
/// Thread-confined to the connection thread, like the ``ConsumerState`` that holds it.
struct UnsettledDeliveries {
    /// Delivered and not settled, ascending (tags rise on a channel).
    private var open: [UInt64] = []
    /// Plain acks of this turn, not yet sent.
    private(set) var pendingAcks: [UInt64] = []
    /// Acks taken in earlier turns and held back (ascending): they settle deliveries behind one still open, and
    /// once that one is settled a single `multiple` ack covers them too. Out of `open` already.
    private(set) var held: [UInt64] = []
    /// The tag of a `multiple` ack not sent yet: every delivery up to it is settled (held back while fewer than
    /// `batch` deliveries are behind it, see `takeAcks(holding:now:)`).
    private var deferredUpTo: UInt64?
    /// How many settled deliveries `deferredUpTo` covers.
    private var deferredCount = 0
    /// Since when acks are held back (nil when none are).
    private(set) var heldSince: ContinuousClock.Instant?
    /// How many settled deliveries a `multiple` ack waits for while holding: a consumer's prefetch over four (one
    /// frame for every few hundred deliveries of a busy consumer instead of one every few, the broker's cost), and
    /// 1, no wait, for a consumer with a small prefetch.
    let batch: Int

    /// Whether acks are held back (see `takeAcks(holding:now:)`).
    var isHolding: Bool { !held.isEmpty || deferredUpTo != nil }

    init(prefetch: UInt16 = 0) {
        batch = Self.batch(prefetch: prefetch)
    }

    /// The `batch` of a consumer with `prefetch`.
    static func batch(prefetch: UInt16) -> Int { max(1, Int(prefetch) / 4) }

    /// Whether a consumer's plain acks may wait for the connection thread's next turn (`Mailbox`): only where they
    /// would wait for a batch anyway. A consumer with a small prefetch (the batches consumer's 4, a queue reader)
    /// has each ack sent at once, as its broker would otherwise hold its next delivery back.
    static func acksMayWait(prefetch: UInt16) -> Bool { batch(prefetch: prefetch) > 1 }

    /// How many deliveries nobody has settled yet (this turn's pending acks count as settled once taken).
    var count: Int { open.count }

    /// A delivery arrived on the channel.
    mutating func delivered(_ tag: UInt64) {
        open.append(tag)
    }

    /// A plain ack to send at the end of the turn; returns true if it is the turn's first for this channel.
    mutating func ackLater(_ tag: UInt64) -> Bool {
        pendingAcks.append(tag)
        return pendingAcks.count == 1
    }

    /// A settlement already sent on its own: a nack, a reject, or an ack the caller asked to be `multiple`.
    mutating func settledNow(_ tag: UInt64, multiple: Bool) {
        if multiple {
            open.removeFirst(open.prefix { $0 <= tag }.count)
        } else if let index = position(of: tag) {
            open.remove(at: index)
        }
    }

    /// The frames that settle the pending acks (and the held ones): at most one `multiple` ack (`upTo`) for those
    /// below the oldest delivery still open, and single acks (`singles`) for the rest: ascending, those of open
    /// deliveries first. Clears the pending acks.
    ///
    /// With `holding`, the acks that would go out as singles are held instead (unless a tag was not open, which
    /// goes out at once with everything), for a later turn to send as part of a `multiple` ack or, without
    /// `holding`, as singles.
    mutating func takeAcks(holding: Bool = false, now: ContinuousClock.Instant = .now) -> (
        upTo: UInt64?, singles: [UInt64]
    ) {
        guard !pendingAcks.isEmpty || isHolding else { return (nil, []) }
        // No new acks: the oldest open delivery is where it was (a nack or reject sends the held acks first), so
        // what is held stays held, without a walk over `open`.
        if pendingAcks.isEmpty && holding { return (nil, []) }
        pendingAcks.sort()
        // Both lists ascend: one pass takes the acked tags out of `open` (compacting it in place: this runs every
        // turn, over up to a prefetch of tags) and sets aside those it does not hold (a second ack of one tag, say),
        // which go out on their own for the broker to answer as the protocol says.
        var acked: [UInt64] = []
        acked.reserveCapacity(pendingAcks.count)
        var unknown: [UInt64] = []
        var next = 0
        var kept = 0
        for position in open.indices {
            let tag = open[position]
            while next < pendingAcks.count, pendingAcks[next] < tag {
                unknown.append(pendingAcks[next])
                next += 1
            }
            if next < pendingAcks.count, pendingAcks[next] == tag {
                acked.append(tag)
                next += 1
                while next < pendingAcks.count, pendingAcks[next] == tag {  // the same tag twice in one turn
                    unknown.append(tag)
                    next += 1
                }
            } else {
                open[kept] = tag
                kept += 1
            }
        }
        open.removeLast(open.count - kept)
        unknown += pendingAcks[next...]
        pendingAcks.removeAll(keepingCapacity: true)

        if !held.isEmpty {
            acked = Self.merged(held, acked)
            held.removeAll(keepingCapacity: true)
        }

        // Below the oldest open delivery everything is settled now: one `multiple` ack covers it.
        let below = open.first.map { limit in acked.prefix { $0 < limit }.count } ?? acked.count
        if below > 0 {
            deferredUpTo = acked[below - 1]
            deferredCount += below
        }
        if holding && unknown.isEmpty {
            held.append(contentsOf: acked[below...])
            var upTo: UInt64? = nil
            if deferredCount >= batch {
                upTo = deferredUpTo
                deferredUpTo = nil
                deferredCount = 0
            }
            if !isHolding {
                heldSince = nil
            } else if heldSince == nil {
                heldSince = now
            }
            return (upTo, [])
        }
        let upTo = deferredUpTo
        deferredUpTo = nil
        deferredCount = 0
        heldSince = nil
        // Acks of open deliveries before the others: a tag the broker does not hold closes the channel, and
        // whatever follows it on that channel is lost.
        return (upTo, Array(acked[below...]) + unknown.sorted())
    }

    /// Two ascending lists of distinct tags as one.
    private static func merged(_ first: [UInt64], _ second: [UInt64]) -> [UInt64] {
        var result: [UInt64] = []
        result.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count && j < second.count {
            if first[i] < second[j] {
                result.append(first[i])
                i += 1
            } else {
                result.append(second[j])
                j += 1
            }
        }
        result += first[i...]
        result += second[j...]
        return result
    }

    /// The channel is gone (a new connection or channel starts its tags at 1 again).
    mutating func reset() {
        open.removeAll()
        pendingAcks.removeAll()
        held.removeAll()
        deferredUpTo = nil
        deferredCount = 0
        heldSince = nil
    }

    /// The index of `tag` in `open`, by binary search.
    private func position(of tag: UInt64) -> Int? {
        var low = 0
        var high = open.count
        while low < high {
            let middle = (low + high) / 2
            if open[middle] < tag { low = middle + 1 } else { high = middle }
        }
        return low < open.count && open[low] == tag ? low : nil
    }
}
