import Synchronization

/// Collects events from a callback and lets a test wait until a condition over them holds — no sleeping.
public final class EventCollector<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var waiters:
            [(id: Int, condition: @Sendable ([Event]) -> Bool, continuation: CheckedContinuation<[Event], Never>)] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Records an event and resumes the waiters whose condition now holds.
    public func record(_ event: Event) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Event], Never>, [Event])] in
            state.events.append(event)
            var ready: [(CheckedContinuation<[Event], Never>, [Event])] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(state.events) else { return false }
                ready.append((waiter.continuation, state.events))
                return true
            }
            return ready
        }
        for (continuation, events) in ready { continuation.resume(returning: events) }
    }

    /// The events so far.
    public var events: [Event] { state.withLock { $0.events } }

    /// Waits until `condition` holds over the events recorded so far (checked on every new event). A cancelled
    /// task (a test's time limit, say) stops waiting and gets the events so far, so that the test fails instead of
    /// hanging.
    public func wait(until condition: @escaping @Sendable ([Event]) -> Bool) async -> [Event] {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> [Event]? in
                    // Checked under the lock the cancellation handler takes too: no waiter is left behind.
                    if condition(state.events) || Task.isCancelled { return state.events }
                    state.waiters.append((id, condition, continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> (CheckedContinuation<[Event], Never>, [Event])? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (state.waiters.remove(at: index).continuation, state.events)
            }
            if let (continuation, events) = cancelled { continuation.resume(returning: events) }
        }
    }
}
