import Synchronization

/// One provider token per key, shared by every connection, refreshed by Apple's rules: before it is an hour old
/// and never twice within 20 minutes.
///
/// Time is injected so that the rules are testable without waiting.
public final class ProviderTokenCache: Sendable {
    /// The refresh timing.
    public struct Configuration: Sendable {
        /// Age at which a token is replaced before use (APNs rejects tokens over an hour old).
        public var refreshAge: Int64 = 50 * 60
        /// The shortest interval between two tokens (APNs answers TooManyProviderTokenUpdates below it).
        public var minimumInterval: Int64 = 20 * 60

        public init() {}
    }

    /// A signed token and when it was issued.
    public struct Token: Sendable, Hashable, CustomStringConvertible {
        /// The JWT. Never logged.
        public let value: String
        /// Seconds since 1970.
        public let issuedAt: Int64

        public var description: String { "ProviderToken(iat: \(issuedAt))" }
    }

    private let signer: ProviderTokenSigner
    private let configuration: Configuration
    private let now: @Sendable () -> Int64
    private let state = Mutex<Token?>(nil)

    /// - Parameter now: the current time in seconds since 1970.
    public init(
        signer: ProviderTokenSigner,
        configuration: Configuration = .init(),
        now: @escaping @Sendable () -> Int64
    ) {
        self.signer = signer
        self.configuration = configuration
        self.now = now
    }

    /// The key id of the tokens this cache makes.
    public var keyID: String { signer.keyID }

    /// The token to use now, signing a new one if there is none or the current one is due for refresh.
    public func current() throws(ProviderTokenError) -> Token {
        let now = self.now()
        return try state.withLock { (token: inout Token?) throws(ProviderTokenError) -> Token in
            if let existing = token, now - existing.issuedAt < configuration.refreshAge {
                return existing
            }
            let fresh = Token(value: try signer.makeToken(issuedAt: now), issuedAt: now)
            token = fresh
            return fresh
        }
    }

    /// Called when APNs answered `ExpiredProviderToken` for `rejected`: replaces it once, however many requests saw
    /// the rejection (a later token is returned as it is), and never sooner than the minimum interval.
    public func refresh(after rejected: Token) throws(ProviderTokenError) -> Token {
        let now = self.now()
        return try state.withLock { (token: inout Token?) throws(ProviderTokenError) -> Token in
            if let existing = token, existing != rejected { return existing }
            if let existing = token, now - existing.issuedAt < configuration.minimumInterval { return existing }
            let fresh = Token(value: try signer.makeToken(issuedAt: now), issuedAt: now)
            token = fresh
            return fresh
        }
    }
}
