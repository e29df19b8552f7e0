import Foundation

/// How a ``WebPushSimulator`` listens, which VAPID keys it accepts, which subscription ids it answers without a
/// registration and which failures it injects.
public struct WebPushSimulatorConfiguration: Sendable {
    /// The address to bind.
    public var host: String = "127.0.0.1"
    /// The host endpoints name (`https://<endpointHost>:<port><pathPrefix><id>`); nil uses ``host``. Set it when
    /// binding `0.0.0.0` or behind a name the server certificate carries.
    public var endpointHost: String? = nil
    /// The port to bind; 0 picks a free one (``WebPushSimulator/start()`` returns it).
    public var port: Int = 0
    /// The server certificate chain in PEM form (leaf first).
    public var certificateChainPEM: String
    /// The server's private key in PEM form.
    public var privateKeyPEM: String
    /// Whether TLS also offers `http/1.1` by ALPN (after `h2`), served with keep-alive; most Web Push libraries
    /// speak HTTP/1.1.
    public var acceptsHTTP1: Bool = true
    /// Whether the service speaks HTTP/2 at all. False makes it a service of HTTP/1.1 alone: TLS offers only
    /// `http/1.1` by ALPN (a client that offers only `h2` gets no protocol) and every connection is HTTP/1.1.
    public var speaksHTTP2: Bool = true
    /// The path before the subscription id, with both slashes.
    public var pathPrefix: String = "/push/"
    /// The current time in seconds since 1970: VAPID `exp` checks and every record's time. Inject a mock clock in
    /// tests; this default is the one place the simulator reads the machine's clock.
    public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    // MARK: Push service limits

    /// The VAPID public keys (base64url, 65-byte uncompressed P-256) the service accepts as `k`; a request with
    /// another `k` is answered 403 `BadJwtToken`. Empty accepts any valid key.
    public var vapidPublicKeys: [String] = []
    /// The largest body accepted; a larger one is answered 413 `PayloadTooLarge` (RFC 8030 asks for at least 4096).
    public var maximumBodySize: Int = 4096
    /// SETTINGS_MAX_CONCURRENT_STREAMS; NIOHTTP2 refuses streams beyond it.
    public var maxConcurrentStreams: Int = 100

    // MARK: Subscriptions nobody registered (benchmarks and demos with many synthetic endpoints)

    /// Ids starting with one of these are answered 410 `Unregistered` without any registration.
    public var goneIDPrefixes: [String] = []
    /// Ids starting with one of these are answered 404 `UnknownSubscription` without any registration.
    public var unknownIDPrefixes: [String] = []
    /// Ids starting with one of these are accepted without any registration: the simulator has no key for them, so
    /// it checks every header and VAPID but skips decryption, checking only the body's `aes128gcm` layout (salt, rs,
    /// idlen 65, one record). Their records have no plaintext and count as undecryptable only when that layout is
    /// wrong. Registered subscriptions (and unsubscribed ones) come first and are always decrypted.
    public var acceptAnyKeysForPrefixes: [String] = []

    // MARK: Fault injection

    /// Answers that replace a 201 on a deterministic schedule (see ``WebPushInjectedFailure``), checked in order.
    public var injectedFailures: [WebPushInjectedFailure] = []
    /// Answer this many requests on a connection; when the next complete request arrives, close the TCP connection
    /// without GOAWAY or TLS close_notify, leaving it and any other open streams unanswered.
    public var dropConnectionAfterRequests: Int? = nil
    /// Delay before every answer.
    public var responseDelay: Duration? = nil
    /// A file that receives every accepted message as one JSON line (id, plaintext as UTF-8 text, ttl, urgency,
    /// topic, time), never the JWT nor any key.
    public var recordFile: String? = nil

    /// Creates a configuration with the TLS identity; everything else has push-service-like defaults.
    public init(certificateChainPEM: String, privateKeyPEM: String, host: String = "127.0.0.1", port: Int = 0) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.host = host
        self.port = port
    }
}
