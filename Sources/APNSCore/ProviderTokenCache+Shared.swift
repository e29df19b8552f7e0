import Foundation
import Synchronization

extension ProviderTokenCache {
    /// The process's one token cache for `signer`'s key (its team, key id and public key): every client that signs
    /// with the key — device sends in each environment, broadcasts, channel management, any app that names the key,
    /// and the clients built again when the apps file is reloaded — presents the same token, refreshed by Apple's
    /// rules for the key as a whole (one token per key, shared by every connection, at most one new one per 20
    /// minutes).
    public static func shared(for signer: ProviderTokenSigner) -> ProviderTokenCache {
        let identity = SharedKey(teamID: signer.teamID, keyID: signer.keyID, publicKeyPEM: signer.publicKeyPEM)
        return sharedCaches.withLock { caches in
            if let cache = caches[identity] { return cache }
            let cache = ProviderTokenCache(signer: signer) { Int64(Date().timeIntervalSince1970) }
            caches[identity] = cache
            return cache
        }
    }

    private struct SharedKey: Hashable {
        var teamID: String
        var keyID: String
        var publicKeyPEM: String
    }

    private static let sharedCaches = Mutex<[SharedKey: ProviderTokenCache]>([:])
}
