import Foundation

/// How an ``FCMSimulator`` listens, which service accounts it knows and which answers it gives besides 200.
public struct FCMSimulatorConfiguration: Sendable {
    /// A service account the token endpoint accepts assertions from: the public half of its key and its project.
    public struct ServiceAccount: Sendable, Hashable {
        /// The RSA public key (2048 bits or more) in PEM form.
        public var publicKeyPEM: String
        /// The project the account belongs to (`project_id` in its key file).
        public var projectID: String
        /// The numeric project number, which `messages:send` accepts in place of the id; nil accepts only the id.
        public var projectNumber: String?
        /// The `private_key_id` the JWT header's `kid` must name; nil accepts any `kid` (it must still be present).
        public var keyID: String?

        /// Creates an account entry.
        public init(publicKeyPEM: String, projectID: String, projectNumber: String? = nil, keyID: String? = nil) {
            self.publicKeyPEM = publicKeyPEM
            self.projectID = projectID
            self.projectNumber = projectNumber
            self.keyID = keyID
        }
    }

    /// The address to bind.
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 picks a free one (``FCMSimulator/start()`` returns it).
    public var port: Int = 0
    /// The server certificate chain in PEM form (leaf first).
    public var certificateChainPEM: String
    /// The server's private key in PEM form.
    public var privateKeyPEM: String
    /// The service accounts the token endpoint knows, by `client_email` (the assertion's `iss`).
    public var serviceAccounts: [String: ServiceAccount]
    /// Whether TLS also offers `http/1.1` by ALPN (after `h2`); OAuth token clients often speak HTTP/1.1.
    public var acceptsHTTP1: Bool = true

    // MARK: OAuth token endpoint

    /// The path of the token endpoint (`token_uri`'s path).
    public var tokenPath: String = "/token"
    /// The `aud` an assertion must carry; nil means `https://<host>:<port><tokenPath>` with the bound port (see
    /// ``FCMSimulator/tokenAudience``). Set `https://oauth2.googleapis.com/token` for clients that always sign
    /// Google's audience.
    public var tokenAudience: String? = nil
    /// `expires_in` of a minted access token, in seconds; the token is refused with 401 once that time has passed.
    public var accessTokenLifetime: Int64 = 3599
    /// The current time in seconds since 1970: JWT `iat`/`exp` checks, access token expiry and every record's time.
    /// Inject a mock clock in tests; this default is the one place the simulator reads the machine's clock.
    public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    // MARK: HTTP/2

    /// SETTINGS_MAX_CONCURRENT_STREAMS (Google's front end allows 100); NIOHTTP2 refuses streams beyond it.
    public var maxConcurrentStreams: Int = 100

    // MARK: Token fates (registration tokens and FIDs, case-sensitive)

    /// Tokens answered 404 UNREGISTERED.
    public var deadTokens: Set<String> = []
    /// Token prefixes answered 404 UNREGISTERED.
    public var deadTokenPrefixes: [String] = []
    /// Token prefixes answered 403 SENDER_ID_MISMATCH (tokens of another Firebase project).
    public var foreignTokenPrefixes: [String] = []
    /// Token prefixes answered 401 THIRD_PARTY_AUTH_ERROR on a real send (the project's APNs or web push credential
    /// is broken); a `validate_only` request passes, as FCM's dry runs do.
    public var thirdPartyAuthErrorPrefixes: [String] = []

    // MARK: Fault injection

    /// Answers that replace a 200 on a deterministic schedule (see ``FCMInjectedFailure``), checked in order.
    public var injectedFailures: [FCMInjectedFailure] = []
    /// Answer this many requests on a connection; when the next complete request arrives, close the TCP connection
    /// without GOAWAY or TLS close_notify, leaving it and any other open streams unanswered.
    public var dropConnectionAfterRequests: Int? = nil
    /// Delay before every answer.
    public var responseDelay: Duration? = nil
    /// A file that receives every accepted message as one JSON line (without the access token), if set.
    public var recordFile: String? = nil

    /// Creates a configuration with the TLS identity and the service accounts; everything else has FCM-like defaults.
    public init(
        certificateChainPEM: String,
        privateKeyPEM: String,
        serviceAccounts: [String: ServiceAccount],
        host: String = "127.0.0.1",
        port: Int = 0
    ) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.serviceAccounts = serviceAccounts
        self.host = host
        self.port = port
    }
}
