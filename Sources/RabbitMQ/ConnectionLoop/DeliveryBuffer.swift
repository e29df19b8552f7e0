import Synchronization

/// Deliveries on their way from the connection thread to a consumer's iterators.
///
/// Bounded by the consumer's prefetch: the broker never has more than `prefetch` unacknowledged deliveries
/// outstanding on the channel, and a delivery leaves this buffer before it can be acknowledged.
/// The thread pushes; iterators pop, or park a continuation when it is empty.
final class DeliveryBuffer: Sendable {
    private static let lastID = Atomic<UInt64>(0)

    /// Identifies the consumer, so that a delivery is settled only through the consumer it came from.
    let id = DeliveryBuffer.lastID.add(1, ordering: .relaxed).newValue
    private enum Terminal {
        case finished
        case failed(AMQPError)
    }

    private struct Waiter {
        let id: UInt64
        let continuation: UnsafeContinuation<Result<AMQPDelivery?, AMQPError>, Never>
    }

    private struct State {
        var deliveries = RingBuffer<AMQPDelivery>()
        var waiters: [Waiter] = []
        var terminal: Terminal?
        var nextWaiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Hands deliveries to waiting iterators or buffers them, in order; drops them once the buffer has ended.
    ///
    /// The connection thread calls this once per loop turn with everything that arrived in the turn, so a
    /// waiting consumer is woken once per batch rather than once per message.
    func push(contentsOf deliveries: [AMQPDelivery]) {
        var handedOver: [(Waiter, AMQPDelivery)] = []
        state.withLock { state in
            guard state.terminal == nil else { return }
            for delivery in deliveries {
                if state.waiters.isEmpty {
                    state.deliveries.append(delivery)
                } else {
                    handedOver.append((state.waiters.removeFirst(), delivery))
                }
            }
        }
        for (waiter, delivery) in handedOver { waiter.continuation.resume(returning: .success(delivery)) }
    }

    /// Drops the deliveries not yet handed out: their connection is gone, so they can no longer be settled and
    /// the broker delivers them again. Waiting iterators keep waiting, for deliveries on the next connection.
    func discardBuffered() {
        state.withLock { $0.deliveries.removeAll() }
    }

    /// How iteration ends.
    enum Ending {
        /// Consumer cancelled: deliveries already buffered are still handed out, then iteration ends.
        case drained
        /// Consumer released or connection closed by the client: buffered deliveries can no longer be
        /// acknowledged (the broker will redeliver them), so they are dropped and iteration ends.
        case closed
        /// Channel or connection lost: buffered deliveries are dropped and iteration throws.
        case failed(AMQPError)
    }

    /// Ends iteration; the first call wins.
    func finish(_ ending: Ending) {
        let waiters: [Waiter] = state.withLock { state in
            guard state.terminal == nil else { return [] }
            switch ending {
            case .drained:
                state.terminal = .finished
            case .closed:
                state.terminal = .finished
                state.deliveries.removeAll()
            case .failed(let error):
                state.terminal = .failed(error)
                state.deliveries.removeAll()
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        // Waiters exist only while the buffer is empty, so none of them skips a delivery.
        let result: Result<AMQPDelivery?, AMQPError>
        if case .failed(let error) = ending { result = .failure(error) } else { result = .success(nil) }
        for waiter in waiters { waiter.continuation.resume(returning: result) }
    }

    /// The failure that ended this buffer, if it failed.
    var failure: AMQPError? {
        state.withLock { state in
            if case .failed(let error) = state.terminal { return error }
            return nil
        }
    }

    /// The next delivery; `nil` when finished or when the calling task is cancelled.
    nonisolated(nonsending) func next() async -> Result<AMQPDelivery?, AMQPError> {
        enum Step {
            case ready(Result<AMQPDelivery?, AMQPError>)
            case wait(UInt64)
        }
        let step: Step = state.withLock { state in
            if let delivery = state.deliveries.popFirst() { return .ready(.success(delivery)) }
            switch state.terminal {
            case .finished: return .ready(.success(nil))
            case .failed(let error): return .ready(.failure(error))
            case nil:
                state.nextWaiterID &+= 1
                return .wait(state.nextWaiterID)
            }
        }
        switch step {
        case .ready(let result):
            return result
        case .wait(let id):
            return await withTaskCancellationHandler {
                await withUnsafeContinuation { continuation in
                    let now: Result<AMQPDelivery?, AMQPError>? = state.withLock { state in
                        if let delivery = state.deliveries.popFirst() { return .success(delivery) }
                        switch state.terminal {
                        case .finished: return .success(nil)
                        case .failed(let error): return .failure(error)
                        case nil: break
                        }
                        if Task.isCancelled { return .success(nil) }
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                let waiter: Waiter? = state.withLock { state in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                waiter?.continuation.resume(returning: .success(nil))
            }
        }
    }
}
