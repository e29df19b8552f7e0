import Synchronization

extension FCMAccessTokenCache {
    /// The process's one cache for `account` (the same project, client email, key and token endpoint): every sender of the account
    /// — in every app that names it, and the senders built again when configuration is reloaded — shares its token.
    ///
    /// The first call for an account creates the cache with its `refreshMargin`, `now` and `mint`; later calls for
    /// the same account get that cache and their own arguments are not used. A rotated key (another key id or
    /// another key) is another account, with its own cache.
    public static func shared(
        for account: FCMServiceAccount,
        refreshMargin: Int64 = 300,
        now: @escaping @Sendable () -> Int64,
        mint: @escaping Mint
    ) -> FCMAccessTokenCache {
        let identity = SharedKey(
            projectID: account.projectID, clientEmail: account.clientEmail, privateKeyID: account.privateKeyID,
            publicKeyPEM: account.publicKeyPEM, tokenURI: account.tokenURI)
        return sharedCaches.withLock { caches in
            if let cache = caches[identity] { return cache }
            let cache = FCMAccessTokenCache(account: account, refreshMargin: refreshMargin, now: now, mint: mint)
            caches[identity] = cache
            return cache
        }
    }

    private struct SharedKey: Hashable {
        var projectID: String
        var clientEmail: String
        var privateKeyID: String
        var publicKeyPEM: String
        /// Another token endpoint mints other tokens (a simulator's, a proxy's).
        var tokenURI: String
    }

    private static let sharedCaches = Mutex<[SharedKey: FCMAccessTokenCache]>([:])
}
