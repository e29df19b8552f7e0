import HeraldCore
import Synchronization

/// A provider's ask to wait for everything sent through one client (FCM's `QUOTA_EXCEEDED` for the project, a push
/// service's 429 or 503 for its origin): until its `Retry-After` has passed, the client sends nothing more, and each
/// request it holds back is answered as the provider would (the status, `reason`, the time left), so that those
/// devices go to the delay queues with the rest instead of holding a worker. The latest end wins.
final class ProviderPause: Sendable {
    private let reason: ProviderReason
    private let clock: HeraldClock
    private let until = Mutex<(instant: ContinuousClock.Instant, status: Int)?>(nil)

    init(reason: ProviderReason, clock: HeraldClock) {
        self.reason = reason
        self.clock = clock
    }

    /// The answer for a request held back while the client waits, or nil when it need not wait.
    func heldBack() -> ProviderAnswer? {
        let now = clock.now()
        guard let paused = until.withLock({ $0 }), paused.instant > now else { return nil }
        return ProviderAnswer(status: paused.status, reason: reason, retryAfter: paused.instant - now)
    }

    /// Pauses the client for `answer`'s `Retry-After`, if it has one.
    func pause(for answer: ProviderAnswer) {
        guard let wait = answer.retryAfter, wait > .zero else { return }
        let end = clock.now() + wait
        until.withLock { paused in
            if paused.map({ $0.instant < end }) ?? true { paused = (end, answer.status) }
        }
    }
}
