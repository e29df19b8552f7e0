import Synchronization

/// A one-shot gate: `wait()` suspends until `open()` (at once if it is already open). Tests wait on events with
/// it, never on time.
final class Gate: Sendable {
    private enum State {
        case closed([CheckedContinuation<Void, Never>])
        case open
    }

    private let state = Mutex(State.closed([]))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let openAlready = state.withLock { state -> Bool in
                switch state {
                case .open: return true
                case .closed(var waiters):
                    waiters.append(continuation)
                    state = .closed(waiters)
                    return false
                }
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .closed(let waiters) = state else { return [] }
            state = .open
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A clock the test moves by hand.
final class FakeClock: Sendable {
    private let seconds: Mutex<Int64>

    init(_ start: Int64) { seconds = Mutex(start) }

    var now: Int64 { seconds.withLock { $0 } }

    func advance(by delta: Int64) { seconds.withLock { $0 += delta } }
}
