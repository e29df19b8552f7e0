import Crypto
import Foundation
import Logging
import NIOCore
import Synchronization

/// An HTTP/2 (and HTTP/1.1) server that answers as a Web Push service does (RFC 8030, 8291, 8292): it keeps the
/// private keys of the subscriptions it made, decrypts what it receives, verifies VAPID, records every message and
/// breaks on demand.
///
/// Built on swift-nio-http2, NIOHTTP1 and swift-crypto with no dependency on Herald's Web Push sender (WebPushCore),
/// so the two sides never mask each other's bugs. TLS offers ALPN `h2` (and `http/1.1` unless turned off);
/// SETTINGS_MAX_CONCURRENT_STREAMS is ``WebPushSimulatorConfiguration/maxConcurrentStreams``.
///
/// `POST <pathPrefix><id>` checks, in order (the first that fails answers; bodies are `{"reason":…,"errno":…}`):
/// 1. method POST → else 405; the subscription: registered → go on; unsubscribed or a
///    ``WebPushSimulatorConfiguration/goneIDPrefixes`` id → 410 `Unregistered`; a
///    ``WebPushSimulatorConfiguration/acceptAnyKeysForPrefixes`` id → go on without keys; anything else → 404
///    `UnknownSubscription`;
/// 2. VAPID: `Authorization: vapid t=<JWT>, k=<key>` → else 401 `MissingAuthorization`; `k` a P-256 key → else 403
///    `BadVapidPublicKey`; `k` among ``WebPushSimulatorConfiguration/vapidPublicKeys`` (if any), an ES256 signature
///    by `k`, `aud` = `https://` + `:authority` (without `:443`), `exp` ahead and at most 24 h ahead, `sub` a
///    `mailto:` or `https:` URI by Apple's rules → else 403 `BadJwtToken`; `k` the subscription's
///    `applicationServerKey`, if it was made with one → else 400 `VapidPkHashMismatch`;
/// 3. `TTL` present → else 400 `MissingTTL`; an integer 0…2419200 → else 400 `BadTTL`; `Urgency`, if present, one of
///    `very-low`, `low`, `normal`, `high` → else 400 `BadUrgency`; `Topic`, if present, ≤ 32 base64url characters
///    and not 4n+1 of them → else 400 `BadWebPushTopic`; `Content-Encoding: aes128gcm` → else 400
///    `BadContentEncoding`; a body of at most ``WebPushSimulatorConfiguration/maximumBodySize`` bytes → else 413
///    `PayloadTooLarge`;
/// 4. an ``WebPushInjectedFailure`` that fires (with `Retry-After` if set);
/// 5. otherwise 201 with `Location` and `TTL`, recorded with the decrypted payload. A body that does not decrypt is
///    answered 201 too, as a real service (which cannot decrypt) would, but recorded without plaintext and counted in
///    ``undecryptableCount``.
public final class WebPushSimulator: Sendable {
    let configuration: WebPushSimulatorConfiguration
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let state: Mutex<SimulatorState>
    let serverChannel = Mutex<(any Channel)?>(nil)
    let connections = Mutex<[ObjectIdentifier: any Channel]>([:])
    let opened = Mutex(0)
    let recordFile = Mutex<FileHandle?>(nil)
    let boundPort = Mutex<Int?>(nil)
    /// The delay before every answer, as NIO counts time.
    let responseDelay: TimeAmount?
    /// ``WebPushSimulatorConfiguration/vapidPublicKeys``, decoded.
    let acceptedVAPIDKeys: Set<[UInt8]>

    /// Creates a simulator; nothing listens until ``start()``.
    public init(configuration: WebPushSimulatorConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.state = Mutex(SimulatorState(failureRules: configuration.injectedFailures.count))
        self.responseDelay = configuration.responseDelay.map { duration in
            let (seconds, attoseconds) = duration.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        self.acceptedVAPIDKeys = Set(configuration.vapidPublicKeys.compactMap { Base64URL.decode($0) })
    }

    /// Binds and starts answering; returns the bound port. Throws if a VAPID public key of the configuration is not
    /// base64url, the path prefix does not start and end with `/`, or the TLS identity is unusable.
    public func start() async throws -> Int {
        guard acceptedVAPIDKeys.count == Set(configuration.vapidPublicKeys).count else {
            throw WebPushSimulatorError("a VAPID public key in vapidPublicKeys is not base64url")
        }
        guard configuration.pathPrefix.hasPrefix("/"), configuration.pathPrefix.hasSuffix("/") else {
            throw WebPushSimulatorError("pathPrefix must start and end with /")
        }
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
        logger.info("Web Push simulator listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
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

    /// The push service's origin, `https://<endpointHost>:<port>` with the bound port once started.
    public var origin: String {
        let port = boundPort.withLock { $0 } ?? configuration.port
        let host = configuration.endpointHost ?? configuration.host
        return port == 443 ? "https://\(host)" : "https://\(host):\(port)"
    }

    /// The messages accepted (answered 201) so far, in order.
    public var records: [WebPushSimulatorRecord] { state.withLock { $0.records } }

    /// Every request answered (or dropped) so far, in order, with its answer.
    public var requests: [WebPushSimulatorRequestRecord] { state.withLock { $0.requests } }

    /// Answers so far by `"<status>"`, or `"<status> <reason>"` when the answer named one (`"403 BadJwtToken"`).
    public var counts: [String: Int] { state.withLock { $0.counts } }

    /// How many connections clients have opened since the simulator started.
    public var connectionsOpened: Int { opened.withLock { $0 } }

    /// How many accepted messages did not decrypt with the subscription's keys.
    public var undecryptableCount: Int { state.withLock { $0.undecryptableCount } }

    /// How many distinct VAPID JWTs with this `aud` passed every VAPID check (Apple asks for at most one new token
    /// an hour).
    public func distinctVAPIDTokens(audience: String) -> Int {
        state.withLock { $0.distinctTokens(audience: audience) }
    }

    /// Counts by status and reason, one per line, then the undecryptable messages, for printing on exit.
    public func summary() -> String {
        let (counts, undecryptable) = state.withLock { ($0.counts, $0.undecryptableCount) }
        var lines = ["Web Push simulator: \(counts.values.reduce(0, +)) requests"]
        for key in counts.keys.sorted() { lines.append("  \(key): \(counts[key]!)") }
        lines.append("  undecryptable (answered 201): \(undecryptable)")
        return lines.joined(separator: "\n")
    }
}

/// A configuration or argument the simulator cannot work with.
public struct WebPushSimulatorError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var description: String

    init(_ description: String) { self.description = description }
}
