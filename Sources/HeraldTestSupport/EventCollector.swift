import Synchronization

/// Collects events from a callback and lets a test wait until a condition over them holds — no sleeping.
public final class EventCollector<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var waiters: [(condition: @Sendable ([Event]) -> Bool, continuation: CheckedContinuation<[Event], Never>)] = []
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

    /// Waits until `condition` holds over the events recorded so far (checked on every new event).
    public func wait(until condition: @escaping @Sendable ([Event]) -> Bool) async -> [Event] {
        await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> [Event]? in
                if condition(state.events) { return state.events }
                state.waiters.append((condition, continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
