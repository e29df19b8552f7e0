import Synchronization

/// One VAPID token per push-service origin for one key and subject, shared by every connection and message:
/// signed with `exp` = now + `lifetime` and reused until fewer than `renewBefore` seconds remain (Apple asks for at
/// most one new token an hour; the default renews a 12-hour token after 11 hours).
///
/// Signing happens under the lock, so concurrent callers for one origin sign once and all get that token. Time is
/// injected (seconds since 1970) so that renewal is testable without waiting.
public final class VAPIDTokenCache: Sendable {
    /// The longest lifetime a push service takes: 24 hours.
    public static let maximumLifetime: Int64 = 24 * 3600
    /// The most origins kept; past it, tokens due for renewal are dropped first (endpoints come from browsers, and a
    /// flood of made-up origins must not grow the cache without bound).
    public static let maximumOrigins = 1024

    private struct State {
        var tokens: [String: VAPIDToken] = [:]
        var signedCount = 0
    }

    /// The key tokens are signed with.
    public let key: VAPIDKey
    /// The `sub` of every token.
    public let subject: VAPIDSubject
    /// Seconds from signing to `exp`, in `60...maximumLifetime`.
    public let lifetime: Int64
    /// A token with fewer seconds than this left is replaced, in `0..<lifetime`.
    public let renewBefore: Int64
    private let now: @Sendable () -> Int64
    private let state = Mutex(State())

    /// - Parameters:
    ///   - lifetime: seconds from signing to `exp`; clamped to 60 seconds … 24 hours.
    ///   - renewBefore: a token is re-signed when fewer seconds than this remain; clamped to `0..<lifetime`.
    ///   - now: the current time in seconds since 1970.
    public init(
        key: VAPIDKey, subject: VAPIDSubject, lifetime: Int64 = 12 * 3600, renewBefore: Int64 = 3600,
        now: @escaping @Sendable () -> Int64
    ) {
        self.key = key
        self.subject = subject
        self.lifetime = min(max(lifetime, 60), Self.maximumLifetime)
        self.renewBefore = min(max(renewBefore, 0), self.lifetime - 1)
        self.now = now
    }

    /// The token for `origin` (the endpoint's ``WebPushEndpoint/origin``, the token's `aud`), signing one when there
    /// is none, when fewer than `renewBefore` seconds remain, or when the clock went back so far that its `exp` is
    /// more than `lifetime` ahead.
    public func token(for origin: String) -> VAPIDToken {
        let now = self.now()
        return state.withLock { state in
            if let token = state.tokens[origin], !isDue(token, now: now) { return token }
            if state.tokens[origin] == nil, state.tokens.count >= Self.maximumOrigins {
                state.tokens = state.tokens.filter { !isDue($0.value, now: now) }
                if state.tokens.count >= Self.maximumOrigins, let any = state.tokens.keys.first {
                    state.tokens[any] = nil
                }
            }
            let token = key.sign(audience: origin, subject: subject, expiresAt: now + lifetime)
            state.tokens[origin] = token
            state.signedCount += 1
            return token
        }
    }

    /// How many tokens this cache has signed (for tests and metrics).
    public var signedCount: Int { state.withLock { $0.signedCount } }

    private func isDue(_ token: VAPIDToken, now: Int64) -> Bool {
        let left = token.expiresAt - now
        return left < renewBefore || left > lifetime
    }
}
