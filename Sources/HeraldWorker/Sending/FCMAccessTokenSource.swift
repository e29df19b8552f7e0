import AsyncHTTPClient
import FCMCore
import HeraldCore
import NIOCore
import NIOSSL
import PushTransport
import Synchronization

/// An app's FCM access tokens as its client takes them: the process's one `FCMAccessTokenCache` for the service
/// account (shared by every app that names it and kept across reloads), minted at the account's `token_uri`.
final class FCMAccessTokenSource: FCMAccessTokens {
    private let cache: FCMAccessTokenCache
    /// The token handed out last, so that a 401 on it can be told apart from one on an older token.
    private let last = Mutex<FCMAccessToken?>(nil)

    init(cache: FCMAccessTokenCache) { self.cache = cache }

    func currentToken() async throws -> String {
        let token = try await cache.current()
        last.withLock { $0 = token }
        return token.value
    }

    func rejected(_ token: String) {
        guard let current = last.withLock({ $0 }), current.value == token else { return }
        cache.invalidate(current)
    }

    /// The cache for `account`: the process's one, minting through `client` with `trustRootsPEM` trusted besides the
    /// system roots (a simulator's CA; verification is never switched off).
    static func cache(
        for account: FCMServiceAccount, client: HTTPClient, trustRootsPEM: [String], clock: HeraldClock
    ) throws(ConfigurationError) -> FCMAccessTokenCache {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .fullVerification
        for pem in trustRootsPEM {
            guard let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)), !certificates.isEmpty else {
                throw ConfigurationError("fcm.ca_file holds no certificate")
            }
            tls.additionalTrustRoots.append(.certificates(certificates))
        }
        let configured = tls
        let mint: FCMAccessTokenCache.Mint = { account, assertion in
            try await Self.mint(account: account, assertion: assertion, client: client, tls: configured, clock: clock)
        }
        return FCMAccessTokenCache.shared(for: account, now: { clock.unixSeconds }, mint: mint)
    }

    /// `POST token_uri` with the signed assertion; the answer bounded and checked by `FCMTokenResponse`.
    private static func mint(
        account: FCMServiceAccount, assertion: String, client: HTTPClient, tls: TLSConfiguration, clock: HeraldClock
    ) async throws -> FCMAccessToken {
        let form = FCMTokenRequest(account: account, assertion: assertion)
        var request = HTTPClientRequest(url: form.url)
        request.method = .POST
        request.tlsConfiguration = tls
        request.headers.add(name: "content-type", value: FCMTokenRequest.contentType)
        request.body = .bytes(ByteBuffer(bytes: form.body))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: FCMTokenResponse.maximumBodySize)
        let answer = try FCMTokenResponse(status: Int(response.status.code), body: body.readableBytesView)
        return answer.accessToken(receivedAt: clock.unixSeconds)
    }
}
