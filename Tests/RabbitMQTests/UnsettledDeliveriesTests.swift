import Testing

@testable import RabbitMQ

/// The bookkeeping that turns a turn's plain acks into one `multiple` ack. Its one promise: a `multiple` ack
/// never reaches past a delivery that nobody settled.
@Suite struct UnsettledDeliveriesTests {
    private func delivered(_ tags: ClosedRange<UInt64>) -> UnsettledDeliveries {
        var unsettled = UnsettledDeliveries()
        for tag in tags { unsettled.delivered(tag) }
        return unsettled
    }

    @Test func aRunOfAcksFromTheFrontBecomesOneMultipleAck() {
        var unsettled = delivered(1...8)
        let first = unsettled.ackLater(3)
        #expect(first)
        for tag: UInt64 in [1, 2, 5, 4] {
            let isFirst = unsettled.ackLater(tag)
            #expect(!isFirst)
        }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == 5)
        #expect(acks.singles.isEmpty)
        #expect(unsettled.count == 3)
        #expect(unsettled.pendingAcks.isEmpty)
    }

    @Test func anOpenDeliveryStopsTheRunAndWhatIsBehindItIsAckedOnItsOwn() {
        var unsettled = delivered(1...6)
        for tag: UInt64 in [1, 2, 4, 6] { _ = unsettled.ackLater(tag) }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == 2)
        #expect(acks.singles == [4, 6])
        // Once 3 is acked, the run reaches past 4 to 5, which is still open.
        _ = unsettled.ackLater(3)
        let next = unsettled.takeAcks()
        #expect(next.upTo == 3)
        #expect(next.singles.isEmpty)
        #expect(unsettled.count == 1)  // 5; 6 was settled behind it
        _ = unsettled.ackLater(5)
        let upTo = unsettled.takeAcks().upTo
        #expect(upTo == 5)
        #expect(unsettled.count == 0)
    }

    /// A group that finishes before an older one: its acks are held, and the older group's acks then settle both
    /// with one `multiple` ack — never one past a delivery still open.
    @Test func heldAcksJoinTheMultipleAckOfTheDeliveriesInFrontOfThem() {
        var unsettled = delivered(1...12)
        for tag: UInt64 in [6, 7, 8, 9, 10] { _ = unsettled.ackLater(tag) }
        let early = unsettled.takeAcks(holding: true)
        #expect(early.upTo == nil && early.singles.isEmpty)
        #expect(unsettled.isHolding)
        let since = unsettled.heldSince
        #expect(since != nil)
        // A turn with nothing new keeps holding them.
        let idle = unsettled.takeAcks(holding: true)
        #expect(idle.upTo == nil && idle.singles.isEmpty && unsettled.isHolding)
        #expect(unsettled.heldSince == since)  // the time of the oldest hold, for the limit
        // 1 to 5 settled: one frame covers 1 to 10; 11 and 12 stay open.
        for tag: UInt64 in [1, 2, 3, 4, 5] { _ = unsettled.ackLater(tag) }
        let together = unsettled.takeAcks(holding: true)
        #expect(together.upTo == 10)
        #expect(together.singles.isEmpty)
        #expect(!unsettled.isHolding && unsettled.heldSince == nil)
        #expect(unsettled.count == 2)
    }

    /// Held acks go out as singles when the holding ends (the limit, or a command that must see them first), and a
    /// tag that was never open sends everything at once.
    @Test func heldAcksGoOutAsSinglesWhenNoLongerHeldOrWithAnUnknownTag() {
        var unsettled = delivered(1...6)
        for tag: UInt64 in [4, 5] { _ = unsettled.ackLater(tag) }
        _ = unsettled.takeAcks(holding: true)
        _ = unsettled.ackLater(2)
        let released = unsettled.takeAcks(holding: false)
        #expect(released.upTo == nil)
        #expect(released.singles == [2, 4, 5])
        #expect(!unsettled.isHolding)

        _ = unsettled.ackLater(6)
        _ = unsettled.takeAcks(holding: true)
        #expect(unsettled.isHolding)
        _ = unsettled.ackLater(99)
        let unknown = unsettled.takeAcks(holding: true)
        #expect(unknown.singles == [6, 99])
        #expect(!unsettled.isHolding)

        _ = unsettled.ackLater(3)
        _ = unsettled.takeAcks(holding: true)
        unsettled.reset()
        #expect(!unsettled.isHolding && unsettled.count == 0)
    }

    /// A consumer with a large prefetch: while holding, its `multiple` ack waits until a quarter of the prefetch is
    /// settled behind it (one frame for hundreds of deliveries, as the C consumer does), and goes out at once when
    /// the holding ends.
    @Test func aBusyConsumersMultipleAckWaitsForAQuarterOfItsPrefetch() {
        var unsettled = UnsettledDeliveries(prefetch: 16)  // a batch of 4
        for tag: UInt64 in 1...12 { unsettled.delivered(tag) }
        for tag: UInt64 in [1, 2] { _ = unsettled.ackLater(tag) }
        let two = unsettled.takeAcks(holding: true)
        #expect(two.upTo == nil && two.singles.isEmpty)
        #expect(unsettled.isHolding && unsettled.heldSince != nil)
        _ = unsettled.ackLater(3)
        #expect(unsettled.takeAcks(holding: true).upTo == nil)
        _ = unsettled.ackLater(4)
        let four = unsettled.takeAcks(holding: true)
        #expect(four.upTo == 4 && four.singles.isEmpty)
        #expect(!unsettled.isHolding && unsettled.heldSince == nil)
        // A deferred run and an ack held behind an open delivery (6) go out together when 6 is settled and the
        // holding ends (its limit, or a command that must see them first).
        for tag: UInt64 in [5, 7] { _ = unsettled.ackLater(tag) }
        #expect(unsettled.takeAcks(holding: true).upTo == nil)
        _ = unsettled.ackLater(6)
        #expect(unsettled.takeAcks(holding: true).upTo == nil)
        let flushed = unsettled.takeAcks(holding: false)
        #expect(flushed.upTo == 7 && flushed.singles.isEmpty)
        #expect(!unsettled.isHolding && unsettled.count == 5)
        // Without holding, nothing waits.
        _ = unsettled.ackLater(8)
        #expect(unsettled.takeAcks(holding: false).upTo == 8)
        // A reset forgets the deferred ack with the rest (its deliveries went back to the queue with the channel).
        _ = unsettled.ackLater(9)
        _ = unsettled.takeAcks(holding: true)
        #expect(unsettled.isHolding)
        unsettled.reset()
        #expect(!unsettled.isHolding && unsettled.heldSince == nil)
    }

    /// Only a consumer whose acks wait for a batch anyway lets them wait for the connection thread's next turn.
    @Test func onlyAConsumerWithALargePrefetchHasItsAcksWait() {
        #expect(UnsettledDeliveries.acksMayWait(prefetch: 1024))
        #expect(UnsettledDeliveries.acksMayWait(prefetch: 8))
        #expect(!UnsettledDeliveries.acksMayWait(prefetch: 7))
        #expect(!UnsettledDeliveries.acksMayWait(prefetch: 4))  // the batches consumer
        #expect(!UnsettledDeliveries.acksMayWait(prefetch: 0))  // unlimited, and queue readers
        #expect(UnsettledDeliveries(prefetch: 1024).batch == 256)
    }

    @Test func nothingAtTheFrontMeansOnlySingleAcks() {
        var unsettled = delivered(1...4)
        for tag: UInt64 in [4, 2] { _ = unsettled.ackLater(tag) }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == nil)
        #expect(acks.singles == [2, 4])
        #expect(unsettled.count == 2)
    }

    @Test func nacksAndRejectsSentOnTheirOwnLetTheRunPassThem() {
        var unsettled = delivered(1...5)
        unsettled.settledNow(2, multiple: false)  // a nack behind the open 1
        unsettled.settledNow(1, multiple: false)  // a reject at the front: 2 goes with it
        #expect(unsettled.count == 3)
        unsettled.settledNow(4, multiple: false)
        for tag: UInt64 in [3, 5] { _ = unsettled.ackLater(tag) }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == 5)
        #expect(acks.singles.isEmpty)
        #expect(unsettled.count == 0)
    }

    @Test func aMultipleSettlementClearsEverythingUpToItsTag() {
        var unsettled = delivered(1...6)
        unsettled.settledNow(5, multiple: false)
        unsettled.settledNow(4, multiple: true)
        #expect(unsettled.count == 1)  // 6; 5 was settled and leaves with the front
        _ = unsettled.ackLater(6)
        let upTo = unsettled.takeAcks().upTo
        #expect(upTo == 6)
    }

    @Test func anAckOfATagTheChannelDoesNotHoldStillGoesToTheBroker() {
        var unsettled = delivered(3...4)
        for tag: UInt64 in [1, 3] { _ = unsettled.ackLater(tag) }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == 3)
        #expect(acks.singles == [1])
    }

    /// A delivery left open for long (a big job being planned) holds up the coalescing, not memory: what is
    /// settled behind it is forgotten at once.
    @Test func whatIsSettledBehindALongOpenDeliveryIsNotKept() {
        var unsettled = delivered(1...1)
        for tag: UInt64 in 2...10_000 {
            unsettled.delivered(tag)
            _ = unsettled.ackLater(tag)
            let acks = unsettled.takeAcks()
            #expect(acks.upTo == nil && acks.singles == [tag])
        }
        #expect(unsettled.count == 1)
        _ = unsettled.ackLater(1)
        let upTo = unsettled.takeAcks().upTo
        #expect(upTo == 1)
    }

    @Test func theSameTagTwiceInOneTurnGoesToTheBrokerTwice() {
        var unsettled = delivered(1...3)
        for tag: UInt64 in [2, 1, 2] { _ = unsettled.ackLater(tag) }
        let acks = unsettled.takeAcks()
        #expect(acks.upTo == 2)
        #expect(acks.singles == [2])
        #expect(unsettled.count == 1)
    }

    @Test func resetForgetsTheOldChannel() {
        var unsettled = delivered(1...3)
        _ = unsettled.ackLater(2)
        unsettled.reset()
        #expect(unsettled.count == 0)
        #expect(unsettled.pendingAcks.isEmpty)
        unsettled.delivered(1)
        _ = unsettled.ackLater(1)
        let upTo = unsettled.takeAcks().upTo
        #expect(upTo == 1)
    }
}
