import NIOCore
import Synchronization

/// Where a batch's tries end: the batch, whatever its client.
protocol BatchReceiver: AnyObject, Sendable {
    func tried(_ ticket: BatchTicket, _ request: WireRequest, _ result: StreamResult)
}

/// What travels with each request of a batch to its result: its index, its room in the pool and when it was handed
/// over.
struct BatchTicket: Sendable {
    var index: Int
    var lease: ConnectionPool.Lease
    var start: NIODeadline
}

/// One ``PooledClient/sendBatch(count:concurrency:request:onAnswer:)``: hands out the next request as room, a stream
/// window slot and the caller allow, and collects the results.
///
/// Every decision about the caller's task is taken under the one lock that also counts what is in flight: the
/// caller sleeps while something is in flight and is woken, with what to do next, by whoever brings that count
/// to zero.
final class BatchSend: BatchReceiver {
    typealias Ticket = BatchTicket

    /// What the caller does when nothing of the batch is in flight.
    enum Next {
        /// Every request is answered or skipped.
        case done
        /// Requests are left but the client had no room: wait for some.
        case waitForRoom
        /// The task was cancelled: fail what was not sent.
        case cancelled
    }

    private struct State {
        /// The next request never tried.
        var next = 0
        /// Indices given back when the client had no room; they go before `next`.
        var givenBack: [Int] = []
        var inFlight = 0
        /// The caller's task was cancelled.
        var cancelled = false
        /// The client cannot send (shut down, no TLS context): the rest fails with this.
        var failure: TransportError?
        var results: [Result<WireResponse, TransportError>?]
        var retries: [(Int, (request: WireRequest, result: StreamResult))] = []
        /// The caller, waiting until nothing of the batch is in flight.
        var waiter: CheckedContinuation<Next, Never>?

        var hasUnsent: Bool { !givenBack.isEmpty || next < results.count }
        /// Requests are left that may still be sent.
        var canSendMore: Bool { hasUnsent && !cancelled && failure == nil }

        /// What the caller does now; only meaningful with nothing in flight.
        var decision: Next {
            if canSendMore { return .waitForRoom }
            return cancelled && hasUnsent ? .cancelled : .done
        }

        /// The caller and what it is to do, if nothing is in flight any more and `wake` holds.
        mutating func wakeCaller(if wake: Bool = true) -> (CheckedContinuation<Next, Never>, Next)? {
            guard inFlight == 0, wake, let waiter else { return nil }
            self.waiter = nil
            return (waiter, decision)
        }

        mutating func take(below concurrency: Int) -> Int? {
            guard !cancelled, failure == nil, inFlight < concurrency else { return nil }
            let index: Int
            if let returned = givenBack.popLast() {
                index = returned
            } else if next < results.count {
                index = next
                next += 1
            } else {
                return nil
            }
            inFlight += 1
            return index
        }
    }

    private let client: any BatchClient
    private let concurrency: Int
    private let bearerToken: String?
    private let request: @Sendable (Int) -> WireRequest?
    private let onAnswer: @Sendable (Int, Result<WireResponse, TransportError>) -> Void
    private let state: Mutex<State>

    init(
        client: any BatchClient,
        count: Int,
        concurrency: Int,
        bearerToken: String?,
        request: @escaping @Sendable (Int) -> WireRequest?,
        onAnswer: @escaping @Sendable (Int, Result<WireResponse, TransportError>) -> Void
    ) {
        self.client = client
        self.concurrency = concurrency
        self.bearerToken = bearerToken
        self.request = request
        self.onAnswer = onAnswer
        self.state = Mutex(State(results: Array(repeating: nil, count: count)))
    }

    /// Sends until every request is answered or skipped; waits for room in the client when it has none and
    /// nothing of the batch is in flight to make some.
    func run() async {
        pump()
        while true {
            let next = await withCheckedContinuation { (continuation: CheckedContinuation<Next, Never>) in
                let now = state.withLock { state -> Next? in
                    guard state.inFlight == 0 else {
                        state.waiter = continuation
                        return nil
                    }
                    return state.decision
                }
                if let now { continuation.resume(returning: now) }
            }
            switch next {
            case .done:
                return
            case .cancelled:
                fail(TransportError(.cancelled, "cancelled before the request was sent"), taken: nil)
                return
            case .waitForRoom:
                switch await client.pool.acquire() {
                case .success(let lease):
                    if let index = state.withLock({ $0.take(below: concurrency) }) {
                        send(index, on: lease)
                    } else {
                        client.pool.release(lease)
                    }
                    pump()
                case .failure(let error):
                    // Shut down, or cancelled while waiting.
                    fail(error, taken: nil)
                    return
                }
            }
        }
    }

    /// Sends the next requests while the window and the client's room allow, on the connection in `slot` when it
    /// is as free as any (the one that just answered).
    private func pump(preferring slot: Int? = nil, taken: Int? = nil) {
        var taken = taken
        while let index = taken ?? state.withLock({ $0.take(below: concurrency) }) {
            taken = nil
            switch client.pool.tryAcquire(preferring: slot) {
            case .leased(let lease):
                send(index, on: lease)
            case .fail(let error):
                fail(error, taken: index)
                return
            case .wait:
                // No room: the index waits for one of ours to finish, or for the caller to wait for room.
                let wake = state.withLock { state in
                    state.givenBack.append(index)
                    state.inFlight -= 1
                    return state.wakeCaller()
                }
                resume(wake)
                return
            }
        }
    }

    /// The client cannot send: every request not yet sent that the caller wants sent (and `taken`, counted in
    /// flight until now) fails with `error`. The caller is woken only after they all have their result.
    private func fail(_ error: TransportError, taken: Int?) {
        var unsent = state.withLock { state -> [Int] in
            if state.failure == nil { state.failure = error }
            var unsent = state.givenBack
            state.givenBack = []
            unsent += state.next..<state.results.count
            state.next = state.results.count
            return unsent
        }
        if let taken { unsent.append(taken) }
        for index in unsent where request(index) != nil { answer(index, .failure(error), since: nil) }
        guard taken != nil else { return }
        let wake = state.withLock { state in
            state.inFlight -= 1
            return state.wakeCaller()
        }
        resume(wake)
    }

    /// Sends request `index` on `lease`, or gives the lease back if the caller declines to make it.
    private func send(_ index: Int, on lease: ConnectionPool.Lease) {
        guard let request = request(index) else {
            client.pool.release(lease)
            let wake = state.withLock { state in
                state.inFlight -= 1
                return state.wakeCaller(if: !state.canSendMore)
            }
            resume(wake)
            return
        }
        lease.connection.enqueue(
            PendingRequest(
                request: request,
                bearerToken: bearerToken,
                receiver: .batch(self, Ticket(index: index, lease: lease, start: .now()))
            )
        )
    }

    /// A request's try ended, wherever its connection reports it (the event loop as a rule).
    func tried(_ ticket: Ticket, _ request: WireRequest, _ result: StreamResult) {
        client.finish(ticket.lease, with: result)
        finished(ticket.index, request, result, since: ticket.start, slot: ticket.lease.slot)
    }

    /// A try ended: its result is final, or the transport retries it after the batch.
    private func finished(
        _ index: Int,
        _ request: WireRequest,
        _ result: StreamResult,
        since start: NIODeadline,
        slot: Int
    ) {
        let final: Result<WireResponse, TransportError>? =
            switch result {
            case .response(let response) where client.isFinal(result): .success(response)
            case .failure(let error): .failure(error)
            case .response, .notSent, .refused: nil
            }
        if let final { report(final, of: index, since: start) }
        let concurrency = self.concurrency
        let (wake, next) = state.withLock { state in
            state.inFlight -= 1
            if let final {
                state.results[index] = final
            } else {
                state.retries.append((index, (request, result)))
            }
            // With nothing in flight the caller takes over, unless there is more to send now: then the next request
            // is taken here, under the same lock.
            let wake = state.wakeCaller(if: !state.canSendMore)
            return (wake, wake == nil ? state.take(below: concurrency) : nil)
        }
        if wake != nil {
            resume(wake)
        } else if let next {
            pump(preferring: slot, taken: next)
        }
    }

    /// Resumes the caller with what it is to do, if a change of state handed it over.
    private func resume(_ wake: (CheckedContinuation<Next, Never>, Next)?) {
        if let (caller, next) = wake { caller.resume(returning: next) }
    }

    /// Records a final result (and its duration if it was sent) and tells the caller.
    func answer(_ index: Int, _ result: Result<WireResponse, TransportError>, since start: NIODeadline?) {
        report(result, of: index, since: start)
        state.withLock { $0.results[index] = result }
    }

    /// A final result's metrics (and its duration if it was sent), and the caller's `onAnswer`.
    private func report(_ result: Result<WireResponse, TransportError>, of index: Int, since start: NIODeadline?) {
        if let start {
            client.pool.metrics.requestDuration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        }
        client.record(result)
        onAnswer(index, result)
    }

    func cancel() {
        let wake = state.withLock { state in
            state.cancelled = true
            return state.wakeCaller()
        }
        resume(wake)
    }

    func takeRetries() -> [(Int, (request: WireRequest, result: StreamResult))] {
        state.withLock { state in
            defer { state.retries = [] }
            return state.retries
        }
    }

    func takeResults() -> [Result<WireResponse, TransportError>?] {
        state.withLock { $0.results }
    }
}
