/// The delivery tags of one consumer channel that the broker still counts as unacknowledged, so that the plain
/// acks a loop turn collects can go out as one `basic.ack` with `multiple` whenever they settle every delivery up
/// to some tag. A consumer that finishes a group of jobs together then costs the broker one ack frame, not one
/// per job.
///
/// Safety rests on `tags` holding every delivery the channel received, handed out or not: a `multiple` ack is
/// only sent up to a tag when every earlier tag is settled (acked now, or settled before by a single frame).
/// A delivery that is never settled stays first and only stops the coalescing, never gets acknowledged by it.
/// Thread-confined to the connection thread, like the ``ConsumerState`` that holds it.
struct UnsettledDeliveries {
    /// Delivered and not yet settled as far as the broker knows, in delivery order (tags rise on a channel).
    private var tags = RingBuffer<UInt64>()
    /// Settled by a single frame while an earlier tag was still open; dropped when they reach the front.
    private var settledAhead = Set<UInt64>()
    /// Plain acks of this turn, not yet sent.
    private(set) var pendingAcks: [UInt64] = []

    init() {}

    /// How many deliveries the broker still counts as unacknowledged (those settled ahead included).
    var count: Int { tags.count }

    /// A delivery arrived on the channel.
    mutating func delivered(_ tag: UInt64) {
        tags.append(tag)
    }

    /// A plain ack to send at the end of the turn; returns true if it is the turn's first for this channel.
    mutating func ackLater(_ tag: UInt64) -> Bool {
        pendingAcks.append(tag)
        return pendingAcks.count == 1
    }

    /// A settlement already sent on its own: a nack, a reject, or an ack the caller asked to be `multiple`.
    mutating func settledNow(_ tag: UInt64, multiple: Bool) {
        if multiple {
            while let first = tags.first, first <= tag {
                _ = tags.popFirst()
                settledAhead.remove(first)
            }
        } else if tags.first == tag {
            _ = tags.popFirst()
        } else {
            settledAhead.insert(tag)
        }
        dropSettledFront()
    }

    /// The frames that settle the pending acks: at most one `multiple` ack covering the settled front of the
    /// channel (`upTo`), and single acks (`singles`, ascending) for the rest. Clears the pending acks.
    mutating func takeAcks() -> (upTo: UInt64?, singles: [UInt64]) {
        guard !pendingAcks.isEmpty else { return (nil, []) }
        pendingAcks.sort()
        var upTo: UInt64?
        var singles: [UInt64] = []
        var next = 0  // the first pending ack not yet matched against the front
        while let first = tags.first {
            // Below the front: not a tag the broker counts as open (a second ack of one tag, say). It goes out
            // on its own, and the broker answers it as the protocol says; hiding a caller's mistake is not ours.
            while next < pendingAcks.count, pendingAcks[next] < first {
                singles.append(pendingAcks[next])
                next += 1
            }
            if next < pendingAcks.count, pendingAcks[next] == first {
                upTo = first
                next += 1
            } else if settledAhead.remove(first) == nil {
                break
            }
            _ = tags.popFirst()
        }
        // Behind an open delivery: acked on its own, and remembered until the front reaches it.
        for tag in pendingAcks[next...] {
            singles.append(tag)
            settledAhead.insert(tag)
        }
        pendingAcks.removeAll(keepingCapacity: true)
        return (upTo, singles)
    }

    /// The channel is gone (a new connection or channel starts its tags at 1 again).
    mutating func reset() {
        tags.removeAll()
        settledAhead.removeAll()
        pendingAcks.removeAll()
    }

    private mutating func dropSettledFront() {
        while let first = tags.first, settledAhead.remove(first) != nil { _ = tags.popFirst() }
    }
}
