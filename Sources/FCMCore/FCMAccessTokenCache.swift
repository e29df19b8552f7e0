import Synchronization

/// One access token per service account, shared by every sender of the process, replaced `refreshMargin` seconds
/// before it expires (never before half its lifetime), minted single-flight.
///
/// However many callers ask while no usable token is cached, exactly one mint runs, in the first caller's task;
/// the others wait for it and get its result. A failed mint fails every caller that waited for it and is not
/// cached: the next call mints again. If the caller running the mint is cancelled and the mint fails, the waiters
/// are not failed with its cancellation: one of them mints instead. A waiter waits for the mint it queued behind
/// even if its own task is cancelled; the mint closure's own timeout bounds that wait.
///
/// Time is read only through `now`, so that the rules are tested without waiting.
public final class FCMAccessTokenCache: Sendable {
    /// Exchanges an assertion for a token: the `POST token_uri` (see `FCMTokenRequest`, `FCMTokenResponse`).
    public typealias Mint = @Sendable (FCMServiceAccount, String) async throws -> FCMAccessToken

    /// The account whose token this is.
    public let account: FCMServiceAccount
    /// How many seconds before expiry a token is replaced.
    public let refreshMargin: Int64
    private let signer: FCMAssertionSigner
    private let now: @Sendable () -> Int64
    private let mint: Mint
    private let state = Mutex(StateMachine())

    /// - Parameters:
    ///   - refreshMargin: seconds before expiry at which the token is replaced (google-auth uses 225; 300 is safe).
    ///   - now: the current time in seconds since 1970.
    ///   - mint: posts the assertion (signed here, issued at `now()`) and returns the token received.
    public init(
        account: FCMServiceAccount,
        refreshMargin: Int64 = 300,
        now: @escaping @Sendable () -> Int64,
        mint: @escaping Mint
    ) {
        self.account = account
        self.refreshMargin = refreshMargin
        self.signer = FCMAssertionSigner(account: account)
        self.now = now
        self.mint = mint
    }

    /// How many mints have started: a measure for tests and metrics.
    public var mintCount: Int { state.withLock { $0.mintCount } }

    /// How many callers wait for the mint in flight (0 when none runs): for tests and metrics.
    public var waitingCount: Int { state.withLock { $0.waitingCount } }

    /// The token to use now: the cached one, or the result of the one mint that replaces it.
    public func current() async throws -> FCMAccessToken {
        while true {
            let now = self.now()
            switch state.withLock({ $0.current(now: now, margin: refreshMargin) }) {
            case .use(let token):
                return token
            case .mint:
                return try await runMint(issuedAt: now)
            case .wait:
                let turn = await withCheckedContinuation { (waiter: CheckedContinuation<Turn, Never>) in
                    if let immediate = state.withLock({ $0.wait(waiter) }) { waiter.resume(returning: immediate) }
                }
                switch turn {
                case .token(let token): return token
                case .failure(let error): throw error
                case .retry: continue
                }
            }
        }
    }

    /// Called after FCM answered 401 `UNAUTHENTICATED` to a request made with `rejected`: forgets it if it is still
    /// the cached token, so that the next `current()` mints. A token already replaced is left alone, so that many
    /// concurrent 401s on one token cause one mint.
    public func invalidate(_ rejected: FCMAccessToken) {
        state.withLock { $0.invalidate(rejected) }
    }

    private func runMint(issuedAt: Int64) async throws -> FCMAccessToken {
        let result: Result<FCMAccessToken, any Error>
        do {
            let assertion = try signer.assertion(issuedAt: issuedAt)
            result = .success(try await mint(account, assertion))
        } catch {
            result = .failure(error)
        }
        let leaderCancelled = Task.isCancelled
        let (waiters, turn) = state.withLock { $0.finish(result, leaderCancelled: leaderCancelled) }
        for waiter in waiters { waiter.resume(returning: turn) }
        return try result.get()
    }
}
