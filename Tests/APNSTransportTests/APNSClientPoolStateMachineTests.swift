import Testing

@testable import PushTransport

/// The pool's pure state: room, least-outstanding choice, waiters and shutdown.
@Suite struct APNSClientPoolStateMachineTests {
    final class FakeConnection: Sendable {
        let id: Int
        init(id: Int) { self.id = id }
    }

    private typealias Pool = ConnectionPool.PoolStateMachine<FakeConnection>

    private func lease(_ pool: inout Pool, counter: inout Int, preferring slot: Int? = nil) -> Pool.Lease? {
        var made = counter
        defer { counter = made }
        guard
            case .leased(let lease) = pool.acquire(
                waiter: nil,
                preferring: slot,
                makeConnection: {
                    made += 1
                    return FakeConnection(id: made)
                })
        else { return nil }
        return lease
    }

    @Test func connectionsOpenLazilyAndRequestsGoToTheLeastBusy() {
        var pool = Pool(connections: 2, limit: 10)
        var made = 0
        let first = lease(&pool, counter: &made)!
        #expect(first.isNew && first.connection.id == 1)
        let second = lease(&pool, counter: &made)!
        #expect(second.isNew && second.connection.id == 2)
        let third = lease(&pool, counter: &made)!
        #expect(!third.isNew)
        _ = pool.release(second, makeConnection: { fatalError() })
        // Connection 2 now has none outstanding, connection 1 has two.
        let fourth = lease(&pool, counter: &made)!
        #expect(fourth.connection.id == 2)
        #expect(made == 2)
    }

    @Test func aPoolWithAStreamCapFillsOneConnectionBeforeOpeningTheNext() {
        // FCM's shape: at most 2 streams a connection here (100 in production), 3 connections at most.
        var pool = Pool(connections: 3, limit: 10, fillingUpTo: 2)
        var made = 0
        let leases = (0..<5).map { _ in lease(&pool, counter: &made)! }
        #expect(leases.map(\.slot) == [0, 0, 1, 1, 2])
        #expect(made == 3)
        // A stream frees on the first connection: the next request goes there, not to the least busy.
        _ = pool.release(leases[0], makeConnection: { fatalError() })
        #expect(lease(&pool, counter: &made)!.slot == 0)
        // Every connection at its cap: the least busy takes it (the server's SETTINGS still bound what it opens).
        #expect(lease(&pool, counter: &made)!.slot == 2)
        #expect(lease(&pool, counter: &made)!.slot == 0)
        #expect(made == 3)
    }

    @Test func aPreferredConnectionIsTakenOnlyWhenItIsAsFreeAsAny() {
        var pool = Pool(connections: 3, limit: 10)
        var made = 0
        let leases = (0..<3).map { _ in lease(&pool, counter: &made)! }
        #expect(leases.map(\.slot) == [0, 1, 2])
        // All three hold one: a tie, and the preferred slot wins it over the first.
        let onTwo = lease(&pool, counter: &made, preferring: 2)!
        #expect(onTwo.slot == 2 && !onTwo.isNew)
        // Slot 2 now holds two, the others one: the preference gives way to the least busy.
        let elsewhere = lease(&pool, counter: &made, preferring: 2)!
        #expect(elsewhere.slot == 0)
        // A slot that does not exist, or whose connection is gone, is no preference at all.
        let outOfRange = lease(&pool, counter: &made, preferring: 7)!
        #expect(outOfRange.slot == 1)
        pool.connectionUnusable(leases[2].connection)
        let afterLoss = lease(&pool, counter: &made, preferring: 2)!
        #expect(afterLoss.slot == 2 && afterLoss.isNew)
        #expect(made == 4)
    }

    @Test func fullPoolMakesCallersWaitAndReleasePassesTheRoomOn() {
        var pool = Pool(connections: 1, limit: 1)
        var made = 0
        let first = lease(&pool, counter: &made)!
        #expect(lease(&pool, counter: &made) == nil)
        #expect(pool.outstandingRequests == 1)
        // No waiter registered: releasing frees the room.
        #expect(pool.release(first, makeConnection: { fatalError() }) == nil)
        #expect(pool.outstandingRequests == 0)
    }

    @Test func unusableConnectionIsReplacedOnNextUse() {
        var pool = Pool(connections: 1, limit: 10)
        var made = 0
        let first = lease(&pool, counter: &made)!
        pool.connectionUnusable(first.connection)
        let second = lease(&pool, counter: &made)!
        #expect(second.isNew && second.connection.id == 2)
        // The old lease's release does not disturb the new connection's count.
        _ = pool.release(first, makeConnection: { fatalError() })
        #expect(pool.outstandingRequests == 1)
    }

    @Test func shutdownFailsLaterAcquiresAndReturnsLiveConnections() {
        var pool = Pool(connections: 2, limit: 10)
        var made = 0
        let first = lease(&pool, counter: &made)!
        pool.connectionUnusable(first.connection)  // replaced after GOAWAY but still finishing its streams
        _ = lease(&pool, counter: &made)
        let (waiters, connections) = pool.shutdown()
        #expect(waiters.isEmpty)
        #expect(Set(connections.map(\.id)) == [1, 2])
        guard case .fail(let error) = pool.acquire(waiter: nil, makeConnection: { fatalError() }) else {
            Issue.record("acquire after shutdown must fail")
            return
        }
        #expect(error.code == .shutDown)
    }
}
