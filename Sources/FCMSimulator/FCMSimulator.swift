import Foundation
import Logging
import NIOCore
import Synchronization

/// An HTTP/2 (and HTTP/1.1) server that answers as Google's OAuth token endpoint and FCM HTTP v1
/// `messages:send` do, records what it accepts and breaks on demand.
///
/// Built on swift-nio-http2 and NIOHTTP1 with no dependency on Herald's FCM client, so the two sides never mask each
/// other's bugs. TLS offers ALPN `h2` (and `http/1.1` unless turned off); SETTINGS_MAX_CONCURRENT_STREAMS is
/// ``FCMSimulatorConfiguration/maxConcurrentStreams``.
///
/// `POST <tokenPath>` (form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`) checks the
/// RS256 assertion of a known service account (`kid`, `iss`, signature, `iat`/`exp`, `aud`, `scope`) and answers
/// `{"access_token":"ya29.…","expires_in":…,"token_type":"Bearer"}`, or 400 with an OAuth error.
///
/// `POST /v1/projects/{project}/messages:send` checks, in order (the first that fails answers):
/// 1. method POST → else 405; the bearer access token is live → else 401 UNAUTHENTICATED; its account belongs to
///    the project → else 403 PERMISSION_DENIED; the body fits 64 KiB → else 413;
/// 2. JSON, unknown fields and types → 400 INVALID_ARGUMENT with a BadRequest detail only;
/// 3. exactly one target and its format, reserved data keys, Android priority, TTL and colour, analytics labels, the
///    4096-byte payload (2048 for topics) → 400 with FcmError INVALID_ARGUMENT;
/// 4. dead token → 404 UNREGISTERED; foreign → 403 SENDER_ID_MISMATCH; third-party prefix on a real send → 401
///    THIRD_PARTY_AUTH_ERROR; an ``FCMInjectedFailure`` that fires (with `Retry-After` if set);
/// 5. otherwise 200 `{"name":"projects/<p>/messages/<id>"}`, recorded (`fake_message_id`, not recorded, for
///    `validate_only`).
public final class FCMSimulator: Sendable {
    let configuration: FCMSimulatorConfiguration
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let verifier: Result<AssertionVerifier, any Error>
    let state: Mutex<SimulatorState>
    let serverChannel = Mutex<(any Channel)?>(nil)
    let connections = Mutex<[ObjectIdentifier: any Channel]>([:])
    let recordFile = Mutex<FileHandle?>(nil)
    private let boundPort = Mutex<Int?>(nil)
    /// The delay before every answer, as NIO counts time.
    let responseDelay: TimeAmount?

    /// Creates a simulator; nothing listens until ``start()``.
    public init(configuration: FCMSimulatorConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.verifier = Result { try AssertionVerifier(serviceAccounts: configuration.serviceAccounts) }
        self.state = Mutex(SimulatorState(failureRules: configuration.injectedFailures.count))
        self.responseDelay = configuration.responseDelay.map { duration in
            let (seconds, attoseconds) = duration.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Binds and starts answering; returns the bound port. Throws if a service account's key is not an RSA public
    /// key, or the TLS identity is unusable.
    public func start() async throws -> Int {
        _ = try verifier.get()
        let sslContext = try Self.makeSSLContext(configuration)
        if let path = configuration.recordFile {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            recordFile.withLock { $0 = FileHandle(forWritingAtPath: path) }
        }
        let channel = try await bind(sslContext: sslContext)
        let port = channel.localAddress?.port ?? configuration.port
        serverChannel.withLock { $0 = channel }
        boundPort.withLock { $0 = port }
        logger.info("FCM simulator listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
        return port
    }

    /// Stops listening, closes every connection and releases every waiter.
    public func stop() async throws {
        let server = serverChannel.withLock { channel in
            defer { channel = nil }
            return channel
        }
        try? await server?.close()
        let open = connections.withLock { Array($0.values) }
        for connection in open { try? await connection.close() }
        recordFile.withLock { handle in
            try? handle?.close()
            handle = nil
        }
        for continuation in state.withLock({ $0.removeAllWaiters() }) { continuation.resume() }
    }

    /// The `aud` assertions must carry: ``FCMSimulatorConfiguration/tokenAudience``, or
    /// `https://<host>:<port><tokenPath>` with the bound port once started.
    public var tokenAudience: String {
        if let audience = configuration.tokenAudience { return audience }
        let port = boundPort.withLock { $0 } ?? configuration.port
        return "https://\(configuration.host):\(port)\(configuration.tokenPath)"
    }

    /// The messages accepted (answered 200, not `validate_only`) so far, in order.
    public var records: [FCMSimulatorRecord] { state.withLock { $0.records } }

    /// Every request answered (or dropped) so far, in order, with its answer.
    public var requests: [FCMSimulatorRequestRecord] { state.withLock { $0.requests } }

    /// Answers so far by `"<status>"`, or `"<status> <errorCode>"` when the answer named one (`"404 UNREGISTERED"`,
    /// `"400 invalid_grant"`).
    public var counts: [String: Int] { state.withLock { $0.counts } }

    /// How many access tokens the token endpoint minted for `clientEmail`.
    public func mintCount(for clientEmail: String) -> Int {
        state.withLock { $0.mints[clientEmail] ?? 0 }
    }

    /// Forgets every access token minted so far: the next send with one is answered 401 UNAUTHENTICATED, as after a
    /// revocation on Google's side.
    public func revokeAccessTokens() {
        state.withLock { $0.revokeGrants() }
    }

    /// Counts by status and error code, one per line, for printing on exit.
    public func summary() -> String {
        let counts = self.counts
        var lines = ["FCM simulator: \(counts.values.reduce(0, +)) requests"]
        for key in counts.keys.sorted() { lines.append("  \(key): \(counts[key]!)") }
        return lines.joined(separator: "\n")
    }
}
