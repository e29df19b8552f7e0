import Synchronization

/// Keeps each app's webhooks in a lane of their own: at most `concurrency` requests in flight per app, and a circuit
/// breaker per endpoint (`WebhookCircuitBreaker`). An event whose lane is full or whose endpoint's breaker is open
/// is not held (it would hold a slot of the shared webhooks queue, and with it every other app's events): the
/// consumer moves it to a delay queue, so a slow or dead endpoint never delays another app's webhooks.
final class WebhookLanes: Sendable {
    typealias Breaker = WebhookCircuitBreaker<ContinuousClock.Instant>

    /// What an event may do now.
    enum Admission: Sendable, Equatable {
        /// Post it (as the breaker's probe, or not); `finish` must follow.
        case send(probe: Bool)
        /// Its app has `concurrency` requests in flight already: try it again later, without counting an attempt.
        case busy
        /// Its endpoint's breaker is open: it failed `threshold` times in a row.
        case open
    }

    private struct State {
        var inFlight: [String: Int] = [:]
        var breakers: [String: Breaker] = [:]
    }

    let concurrency: Int
    let threshold: Int
    let openFor: Duration
    private let state = Mutex(State())

    init(concurrency: Int, threshold: Int, openFor: Duration) {
        self.concurrency = max(1, concurrency)
        self.threshold = max(1, threshold)
        self.openFor = openFor
    }

    /// Admits an event of `app` for `endpoint` (its URL): a request slot and the breaker's leave, or why not.
    func admit(app: String, endpoint: String, now: ContinuousClock.Instant) -> Admission {
        state.withLock { (state: inout State) -> Admission in
            guard state.inFlight[app, default: 0] < concurrency else { return .busy }
            var breaker = state.breakers[endpoint] ?? Breaker(threshold: threshold, openFor: openFor)
            let admission = breaker.admit(now: now)
            state.breakers[endpoint] = breaker
            switch admission {
            case .send, .probe:
                state.inFlight[app, default: 0] += 1
                return .send(probe: admission == .probe)
            case .refused:
                return .open
            }
        }
    }

    /// Gives back the slot `admit` gave, with what the request came to.
    func finish(app: String, endpoint: String, delivered: Bool, now: ContinuousClock.Instant) {
        state.withLock { (state: inout State) in
            state.inFlight[app] = max(0, state.inFlight[app, default: 1] - 1)
            var breaker = state.breakers[endpoint] ?? Breaker(threshold: threshold, openFor: openFor)
            breaker.record(delivered: delivered, now: now)
            state.breakers[endpoint] = breaker
        }
    }

    /// Requests in flight for `app` (for the tests).
    func inFlight(_ app: String) -> Int { state.withLock { $0.inFlight[app, default: 0] } }

    /// Whether `endpoint`'s breaker lets no request through now.
    func isOpen(_ endpoint: String) -> Bool { state.withLock { $0.breakers[endpoint]?.isOpen ?? false } }
}
