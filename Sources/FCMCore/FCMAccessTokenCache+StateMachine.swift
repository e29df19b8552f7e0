extension FCMAccessTokenCache {
    /// What a waiter is told when the mint it waited for ends.
    enum Turn: Sendable {
        case token(FCMAccessToken)
        case failure(any Error)
        /// Look again: the mint ended before the waiter was queued, or its leader was cancelled.
        case retry
    }

    /// The cache's state. Valid transitions are:
    /// - idle (with or without a token) → minting, when a caller finds no usable token (`current` → `.mint`);
    /// - minting → minting, when another caller queues behind the mint (`current` → `.wait`, then `wait`);
    /// - minting → idle with the new token (success), or with the token it had (failure; nothing is cached).
    /// `invalidate` drops the token in either state if it is the one rejected.
    struct StateMachine: ~Copyable {
        enum Action {
            case use(FCMAccessToken)
            case mint
            case wait
        }

        private(set) var token: FCMAccessToken?
        /// Nil when no mint runs; the callers waiting for it otherwise.
        private var waiters: [CheckedContinuation<Turn, Never>]?
        private(set) var mintCount = 0

        /// How many callers wait for the running mint.
        var waitingCount: Int { waiters?.count ?? 0 }

        /// A caller wants a token at `now`.
        mutating func current(now: Int64, margin: Int64) -> Action {
            if let token, now < token.refreshesAt(margin: margin) { return .use(token) }
            if waiters != nil { return .wait }
            waiters = []
            mintCount += 1
            return .mint
        }

        /// Queues `waiter` behind the running mint; returns `.retry` (to be given at once) if none runs any more.
        mutating func wait(_ waiter: CheckedContinuation<Turn, Never>) -> Turn? {
            guard waiters != nil else { return .retry }
            waiters!.append(waiter)
            return nil
        }

        /// The mint ended. Returns the waiters and what to tell them. When the leader was cancelled and its mint
        /// failed, the failure is its own: the waiters look again, and one of them mints.
        mutating func finish(
            _ result: Result<FCMAccessToken, any Error>, leaderCancelled: Bool
        ) -> (waiters: [CheckedContinuation<Turn, Never>], turn: Turn) {
            let queued = waiters ?? []
            waiters = nil
            switch result {
            case .success(let fresh):
                token = fresh
                return (queued, .token(fresh))
            case .failure(let error):
                return (queued, leaderCancelled ? .retry : .failure(error))
            }
        }

        /// A request with `rejected` got 401: forget it, unless it has already been replaced.
        mutating func invalidate(_ rejected: FCMAccessToken) {
            if token == rejected { token = nil }
        }
    }
}
