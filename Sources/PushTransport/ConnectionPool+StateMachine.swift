import NIOCore

extension ConnectionPool {
    /// The pool's shared state: connection slots with their outstanding requests, the bound on requests held, the
    /// callers waiting for room, and shutdown. Pure; the client holds it behind a `Mutex` and performs the actions.
    struct PoolStateMachine<Connection: AnyObject & Sendable>: Sendable {
        /// A request's claim on room in the client and on one connection.
        struct Lease: Sendable {
            var slot: Int
            var connection: Connection
            /// The connection was created for this lease: its holder must start it.
            var isNew: Bool
        }

        enum AcquireAction {
            case leased(Lease)
            case wait
            case fail(TransportError)
        }

        private struct Slot {
            var connection: Connection?
            var outstanding = 0
        }

        private enum Phase {
            case running
            case shutDown
        }

        private var phase = Phase.running
        private var slots: [Slot]
        private var outstanding = 0
        private let limit: Int
        private var waiters: [(id: Int, continuation: Waiter)] = []
        /// Every connection not yet closed, including those replaced after GOAWAY that still finish their streams.
        private var live: [ObjectIdentifier: Connection] = [:]

        typealias Waiter = CheckedContinuation<Result<Lease, TransportError>, Never>

        /// With a cap on each connection's streams (FCM's 100), a connection is filled to it before the next one
        /// opens: connections open as the load needs them, and each carries as many requests per write as it can.
        private let fillingUpTo: Int?

        init(connections: Int, limit: Int, fillingUpTo: Int? = nil) {
            slots = Array(repeating: Slot(), count: max(1, connections))
            self.limit = max(1, limit)
            self.fillingUpTo = fillingUpTo
        }

        /// Takes room for one request and picks the connection with the fewest outstanding requests, creating one
        /// (with `makeConnection`) in an empty slot. Waits (`waiterID` given) when the client is full.
        /// `preferring` is a slot to take when it has as few outstanding requests as any: a batch sends its next
        /// request on the connection that just answered, whose handler then writes it with that connection's other
        /// new requests.
        mutating func acquire(
            waiter: (id: Int, continuation: Waiter)?,
            preferring preferred: Int? = nil,
            makeConnection: () -> Connection
        ) -> AcquireAction {
            guard case .running = phase else {
                return .fail(TransportError(.shutDown, "the client was shut down"))
            }
            guard outstanding < limit, waiters.isEmpty || waiter == nil else {
                if let waiter { waiters.append(waiter) }
                return .wait
            }
            outstanding += 1
            return .leased(lease(preferring: preferred, makeConnection: makeConnection))
        }

        private mutating func lease(preferring preferred: Int? = nil, makeConnection: () -> Connection) -> Lease {
            var best = 0
            if let cap = fillingUpTo {
                best = fillingSlot(cap: cap, preferring: preferred)
            } else {
                for index in slots.indices where slots[index].outstanding < slots[best].outstanding {
                    best = index
                }
                if let preferred, slots.indices.contains(preferred), slots[preferred].connection != nil,
                    slots[preferred].outstanding == slots[best].outstanding
                {
                    best = preferred
                }
            }
            slots[best].outstanding += 1
            if let connection = slots[best].connection {
                return Lease(slot: best, connection: connection, isNew: false)
            }
            let connection = makeConnection()
            slots[best].connection = connection
            live[ObjectIdentifier(connection)] = connection
            return Lease(slot: best, connection: connection, isNew: true)
        }

        /// The slot a filling pool leases: the preferred one or the first open connection with room under `cap`,
        /// else the first slot without a connection (a new one), else the least busy.
        private func fillingSlot(cap: Int, preferring preferred: Int?) -> Int {
            if let preferred, slots.indices.contains(preferred), slots[preferred].connection != nil,
                slots[preferred].outstanding < cap
            {
                return preferred
            }
            if let open = slots.indices.first(where: { slots[$0].connection != nil && slots[$0].outstanding < cap }) {
                return open
            }
            if let empty = slots.indices.first(where: { slots[$0].connection == nil }) { return empty }
            var best = 0
            for index in slots.indices where slots[index].outstanding < slots[best].outstanding { best = index }
            return best
        }

        /// The request of `lease` is finished. Returns a waiter to resume with a fresh lease (the room passes on).
        mutating func release(
            _ lease: Lease,
            makeConnection: () -> Connection
        ) -> (Waiter, Lease)? {
            if slots[lease.slot].connection === lease.connection {
                slots[lease.slot].outstanding -= 1
            }
            if case .running = phase, !waiters.isEmpty {
                let waiter = waiters.removeFirst()
                return (waiter.continuation, self.lease(makeConnection: makeConnection))
            }
            outstanding -= 1
            return nil
        }

        /// A waiting caller was cancelled: returns its continuation if it was still waiting.
        mutating func cancelWaiter(id: Int) -> Waiter? {
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index).continuation
        }

        /// `connection` takes no more requests: its slot is emptied so the next request opens a new one.
        mutating func connectionUnusable(_ connection: Connection) {
            for index in slots.indices where slots[index].connection === connection {
                slots[index] = Slot()
            }
        }

        /// `connection` has closed.
        mutating func connectionClosed(_ connection: Connection) {
            connectionUnusable(connection)
            live[ObjectIdentifier(connection)] = nil
        }

        /// Stops the pool: returns the waiters to fail and the connections to close.
        mutating func shutdown() -> (waiters: [Waiter], connections: [Connection]) {
            guard case .running = phase else { return ([], []) }
            phase = .shutDown
            let waiting = waiters.map(\.continuation)
            waiters.removeAll()
            return (waiting, Array(live.values))
        }

        /// Requests holding room now (waiting for a stream or in flight); for tests.
        var outstandingRequests: Int { outstanding }
        /// Callers waiting for room; for tests.
        var waitingCallers: Int { waiters.count }
    }
}
