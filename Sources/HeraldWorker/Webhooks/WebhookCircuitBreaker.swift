/// The circuit breaker of one webhook endpoint: after `threshold` failures in a row (an answer other than 2xx, a
/// timeout, a refused connection) it opens, and the endpoint gets no request for `openFor`; then one request is let
/// through as a probe (half-open) while the others still wait. A delivered probe closes it, a failed one opens it
/// again. So a dead or slow endpoint costs one request per `openFor`, not one per event.
///
/// Valid transitions are:
/// - closed(n) → closed(n + 1) on a failure below the threshold, closed(0) on a delivery;
/// - closed(n) → open(until: now + openFor) on the failure that reaches the threshold;
/// - open(until) → probing when a request is admitted at or after `until`;
/// - probing → closed(0) on a delivery, open(until: now + openFor) on a failure.
///
/// A pure value: time is given, never read (`Instant` is `ContinuousClock.Instant` in the worker, any instant in
/// the tests).
struct WebhookCircuitBreaker<Instant: InstantProtocol<Duration>>: Sendable {
    enum State: Sendable, Equatable {
        case closed(failures: Int)
        case open(until: Instant)
        /// The probe is in flight; the endpoint gets no other request until it is answered.
        case probing
    }

    /// What a request to the endpoint may do now.
    enum Admission: Sendable, Equatable {
        /// Send it.
        case send
        /// Send it as the probe of an open breaker.
        case probe
        /// Do not send it: the breaker is open (or its probe is in flight) until then, or until the probe is answered.
        case refused(until: Instant?)
    }

    let threshold: Int
    let openFor: Duration
    private(set) var state: State = .closed(failures: 0)

    init(threshold: Int, openFor: Duration) {
        self.threshold = max(1, threshold)
        self.openFor = openFor
    }

    mutating func admit(now: Instant) -> Admission {
        switch state {
        case .closed:
            return .send
        case .open(let until) where now >= until:
            state = .probing
            return .probe
        case .open(let until):
            return .refused(until: until)
        case .probing:
            return .refused(until: nil)
        }
    }

    /// Records the answer to an admitted request.
    mutating func record(delivered: Bool, now: Instant) {
        switch (state, delivered) {
        case (_, true):
            state = .closed(failures: 0)
        case (.closed(let failures), false) where failures + 1 < threshold:
            state = .closed(failures: failures + 1)
        case (.closed, false), (.probing, false):
            state = .open(until: now.advanced(by: openFor))
        case (.open, false):
            // An answer to a request admitted before the breaker opened: it is open already.
            break
        }
    }

    /// Whether the endpoint gets no request now (for the reason an event waits).
    var isOpen: Bool {
        if case .closed = state { return false }
        return true
    }
}
