import Foundation

/// How an ``APNSSimulator`` listens, whom it trusts and which answers it gives besides 200.
public struct APNSSimulatorConfiguration: Sendable {
    /// A provider key the simulator accepts: the team it belongs to and its public half.
    public struct ProviderKey: Sendable, Hashable {
        /// The 10-character team id the key belongs to (`iss` of its tokens).
        public var teamID: String
        /// The P-256 public key in PEM form.
        public var publicKeyPEM: String

        public init(teamID: String, publicKeyPEM: String) {
            self.teamID = teamID
            self.publicKeyPEM = publicKeyPEM
        }
    }

    /// The address to bind.
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 picks a free one (``APNSSimulator/start()`` returns it).
    public var port: Int = 0
    /// The server certificate chain in PEM form (leaf first).
    public var certificateChainPEM: String
    /// The server's private key in PEM form.
    public var privateKeyPEM: String
    /// Key id (`kid`) → team and public key.
    public var providerKeys: [String: ProviderKey]
    /// Allowed bundle ids (the topic with its push type's suffix removed); nil allows any.
    public var topics: Set<String>? = nil
    /// Hex tokens answered 410 Unregistered with a timestamp.
    public var deadTokens: Set<String> = []
    /// Hex prefixes answered 410 Unregistered with a timestamp.
    public var deadTokenPrefixes: [String] = []
    /// The 410 `timestamp` in milliseconds since 1970; nil uses ``now`` at the time of the answer.
    public var deadTimestamp: Int64? = nil
    /// The clock for millisecond timestamps (410 `timestamp`, `receivedAt`): APNs reports milliseconds, and the
    /// 410 rule compares them with registration times that have sub-second precision.
    public var nowMilliseconds: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    /// Hex prefixes answered 400 BadDeviceToken.
    public var badTokenPrefixes: [String] = []
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised in the initial SETTINGS (after authentication, see
    /// ``maxConcurrentStreamsUntilAuthenticated``).
    public var maxConcurrentStreams: Int = 1000
    /// SETTINGS_HEADER_TABLE_SIZE advertised in the initial SETTINGS: the most the client's HPACK table may hold. Nil
    /// keeps HTTP/2's 4,096 bytes.
    public var headerTableSize: Int? = nil
    /// A file that receives every accepted notification as one JSON line, if set.
    public var recordFile: String? = nil
    /// The current time in **seconds** since 1970, as `ProviderTokenCache` and `ProviderTokenVerifier` count it,
    /// so that one mock clock can drive both sides. Millisecond timestamps are this value times 1000.
    public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    /// The shortest interval, in seconds, between two different provider tokens on one connection; a quicker change
    /// is answered 429 TooManyProviderTokenUpdates. Measured with ``now`` between the first uses of each token.
    /// nil disables the rule.
    public var minimumTokenUpdateInterval: Int64? = 20 * 60

    // MARK: Broadcast channels

    /// The most channels one bundle id may hold; creating one more is answered 400 CannotCreateChannelConfig (APNs
    /// allows 10,000 per app and environment).
    public var maximumChannelsPerApp: Int = 10_000
    /// Bundle ids whose broadcast capability is off: every channel-management and broadcast request for them is
    /// answered 403 FeatureNotEnabled.
    public var broadcastDisabledBundles: Set<String> = []

    // MARK: Fault injection

    /// Answers that replace a 200 on a deterministic schedule (see ``InjectedFailure``), checked in order.
    public var injectedFailures: [InjectedFailure] = []
    /// After this many complete requests on a connection, send GOAWAY (NO_ERROR, last stream id = the highest stream
    /// seen, all of which are still answered), then close once they are answered. Later streams are ignored.
    public var goAwayAfterStreams: Int? = nil
    /// Answer this many requests on a connection; when the next complete request arrives, close the TCP connection
    /// without GOAWAY or TLS close_notify, leaving it and any other open streams unanswered.
    public var dropConnectionAfterStreams: Int? = nil
    /// Hex prefixes whose streams are never answered (the stream stays open until the client resets it or the
    /// connection ends).
    public var silentTokenPrefixes: [String] = []
    /// Delay before every answer.
    public var responseDelay: Duration? = nil
    /// If set, the initial SETTINGS advertise this many streams (APNs: 1) until the first request with a valid
    /// provider token, after which a SETTINGS frame raises the limit to ``maxConcurrentStreams``.
    public var maxConcurrentStreamsUntilAuthenticated: Int? = nil
    /// If not empty, TLS requires a client certificate verified against these CA certificates (PEM), as APNs does
    /// for certificate-based providers; requests on such connections need no provider token.
    public var clientCertificateTrustRootsPEM: [String] = []
    /// Hex prefixes whose streams are reset with RST_STREAM(REFUSED_STREAM) instead of answered (as APNs does to
    /// streams above a lowered limit), at most ``refusedStreamLimit`` times in all.
    public var refusedStreamTokenPrefixes: [String] = []
    /// How many streams ``refusedStreamTokenPrefixes`` refuses before answering normally.
    public var refusedStreamLimit: Int = .max

    /// Creates a configuration with the TLS identity and the provider keys; everything else has APNs-like defaults.
    public init(
        certificateChainPEM: String,
        privateKeyPEM: String,
        providerKeys: [String: ProviderKey],
        host: String = "127.0.0.1",
        port: Int = 0
    ) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.providerKeys = providerKeys
        self.host = host
        self.port = port
    }

    /// Creates a configuration from keys given as tuples (`kid` → team id and public key PEM).
    @_disfavoredOverload
    public init(
        certificateChainPEM: String,
        privateKeyPEM: String,
        providerKeys: [String: (teamID: String, publicKeyPEM: String)],
        host: String = "127.0.0.1",
        port: Int = 0
    ) {
        self.init(
            certificateChainPEM: certificateChainPEM,
            privateKeyPEM: privateKeyPEM,
            providerKeys: providerKeys.mapValues { ProviderKey(teamID: $0.teamID, publicKeyPEM: $0.publicKeyPEM) },
            host: host,
            port: port
        )
    }
}

/// An answer the simulator gives instead of 200, on a deterministic schedule.
///
/// Counting is per rule and across connections: among the requests that would otherwise be accepted (and whose
/// token has `tokenPrefix`, if set), the `every`-th, 2·`every`-th … are answered with `status` and `reason`, at
/// most `times` times. `every: 1, times: 2` fails the first two; `every: 3` fails every third forever. With
/// `timesPerToken`, a token the rule has already failed that many times is no longer eligible: `tokenPrefix: "f1",
/// timesPerToken: 2` fails each f1… device's first two requests, however the requests of different devices
/// interleave.
public struct InjectedFailure: Sendable, Hashable, Codable {
    /// The HTTP status, e.g. 429, 500 or 503.
    public var status: Int
    /// The `reason` in the JSON body, e.g. `TooManyRequests`.
    public var reason: String
    /// Which eligible requests fail: every n-th, counting from 1.
    public var every: Int
    /// Only tokens with this hex prefix are eligible; nil makes every token eligible.
    public var tokenPrefix: String?
    /// How many times the rule fires at most; nil is unlimited.
    public var times: Int?
    /// How many times the rule fires at most for any one token; nil is unlimited.
    public var timesPerToken: Int?

    public init(
        status: Int, reason: String, every: Int = 1, tokenPrefix: String? = nil, times: Int? = nil,
        timesPerToken: Int? = nil
    ) {
        self.status = status
        self.reason = reason
        self.every = max(1, every)
        self.tokenPrefix = tokenPrefix
        self.times = times
        self.timesPerToken = timesPerToken
    }

    private enum CodingKeys: String, CodingKey {
        case status, reason, every, tokenPrefix, times, timesPerToken
    }

    /// Decodes a rule; `every` defaults to 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            status: try container.decode(Int.self, forKey: .status),
            reason: try container.decode(String.self, forKey: .reason),
            every: try container.decodeIfPresent(Int.self, forKey: .every) ?? 1,
            tokenPrefix: try container.decodeIfPresent(String.self, forKey: .tokenPrefix),
            times: try container.decodeIfPresent(Int.self, forKey: .times),
            timesPerToken: try container.decodeIfPresent(Int.self, forKey: .timesPerToken)
        )
    }

    /// 429 TooManyRequests.
    public static func tooManyRequests(every: Int = 1, tokenPrefix: String? = nil, times: Int? = nil) -> Self {
        Self(status: 429, reason: "TooManyRequests", every: every, tokenPrefix: tokenPrefix, times: times)
    }

    /// 500 InternalServerError.
    public static func internalServerError(every: Int = 1, tokenPrefix: String? = nil, times: Int? = nil) -> Self {
        Self(status: 500, reason: "InternalServerError", every: every, tokenPrefix: tokenPrefix, times: times)
    }

    /// 503 ServiceUnavailable.
    public static func serviceUnavailable(
        every: Int = 1, tokenPrefix: String? = nil, times: Int? = nil, timesPerToken: Int? = nil
    ) -> Self {
        Self(
            status: 503, reason: "ServiceUnavailable", every: every, tokenPrefix: tokenPrefix, times: times,
            timesPerToken: timesPerToken)
    }
}
