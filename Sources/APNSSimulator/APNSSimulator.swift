import APNSCore
import Foundation
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 server that answers as APNs does (TLS with ALPN h2, `POST /3/device/<hex>`, Apple's statuses and
/// reasons), records what it accepts and breaks on demand.
///
/// Built on swift-nio-http2 so that it shares no code with the nghttp2-based client it tests.
///
/// Checks, in order (the first that fails answers; every answer carries `apns-id` and `apns-unique-id`):
/// 1. a header name sent twice → 400 DuplicateHeaders;
/// 2. `:method` not POST → 405 MethodNotAllowed;
/// 3. `:path` not `/3/device/<token>` → 404 BadPath; empty token → 400 MissingDeviceToken; not even-length hex →
///    400 BadDeviceToken;
/// 4. `authorization`: missing → 403 MissingProviderToken; not `bearer <jwt>`, unknown key, wrong team, bad
///    signature → 403 InvalidProviderToken; `iat` over an hour old → 403 ExpiredProviderToken (verdicts are cached
///    per JWT string, only the age is rechecked); another team than the connection's first → 403 UnrelatedKeyIdInToken; a
///    different JWT within ``APNSSimulatorConfiguration/minimumTokenUpdateInterval`` of the previous one on the
///    connection → 429 TooManyProviderTokenUpdates;
/// 5. `apns-topic` missing → 400 MissingTopic; containing whitespace → 400 BadTopic; `apns-push-type` unknown → 400
///    InvalidPushType (absent means alert); a push type with a topic suffix sent to a topic without it → 400
///    DeviceTokenNotForTopic (APNs binds a VoIP/Live Activity/… token to bundle id + suffix, so the bare bundle id is
///    a topic the token is not for); bundle id not in ``APNSSimulatorConfiguration/topics`` → 400 TopicDisallowed;
/// 6. `apns-priority` not 1, 5 or 10, or background with an explicit priority other than 5 → 400 BadPriority;
///    `apns-expiration` not a non-negative integer → 400 BadExpirationDate; `apns-collapse-id` over 64 bytes → 400
///    BadCollapseId; `apns-id` not a lowercase canonical UUID → 400 BadMessageId;
/// 7. empty body → 400 PayloadEmpty; over 4096 bytes (5120 for voip) → 413 PayloadTooLarge;
/// 8. token with a bad prefix → 400 BadDeviceToken; dead token → 410 Unregistered with `timestamp` (after 9);
/// 9. with `apns-push-type: liveactivity`: priority not 5 or 10 → 400 BadPriority; a payload without the Live
///    Activity keys its event needs → 400 PayloadEmpty (see ``LiveActivityValidation``);
/// 10. an ``InjectedFailure`` that fires; otherwise 200, recorded.
///
/// On the same listener it serves Apple's broadcast endpoints (channel management under `/1/apps/<bundle>/…` and
/// broadcast sends at `/4/broadcasts/apps/<bundle>`), answered with `apns-request-id`; see
/// `APNSSimulator+Channels.swift` and `APNSSimulator+Broadcast.swift`.
public final class APNSSimulator: Sendable {
    let configuration: APNSSimulatorConfiguration
    private let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let verifier: Result<ProviderTokenVerifier, ProviderTokenError>
    let state: Mutex<SimulatorState>
    /// The broadcast channels of every bundle.
    let channelRegistry = Mutex(ChannelRegistry())
    private let serverChannel = Mutex<(any Channel)?>(nil)
    private let connections = Mutex<[ObjectIdentifier: any Channel]>([:])
    let recordFile = Mutex<FileHandle?>(nil)
    /// The delay before every answer, as NIO counts time.
    let responseDelay: TimeAmount?

    /// Creates a simulator; nothing listens until ``start()``.
    public init(configuration: APNSSimulatorConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        // Tokens arrive lower-cased; so are the lists, once, here.
        var configuration = configuration
        configuration.deadTokens = Set(configuration.deadTokens.map { $0.lowercased() })
        configuration.deadTokenPrefixes = configuration.deadTokenPrefixes.map { $0.lowercased() }
        configuration.badTokenPrefixes = configuration.badTokenPrefixes.map { $0.lowercased() }
        configuration.silentTokenPrefixes = configuration.silentTokenPrefixes.map { $0.lowercased() }
        configuration.injectedFailures = configuration.injectedFailures.map { failure in
            var failure = failure
            failure.tokenPrefix = failure.tokenPrefix?.lowercased()
            return failure
        }
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.verifier = Result { () throws(ProviderTokenError) in
            try ProviderTokenVerifier(
                keys: configuration.providerKeys.mapValues { (teamID: $0.teamID, publicKeyPEM: $0.publicKeyPEM) }
            )
        }
        self.state = Mutex(SimulatorState(failureRules: configuration.injectedFailures.count))
        self.responseDelay = configuration.responseDelay.map { duration in
            let (seconds, attoseconds) = duration.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Binds and starts answering; returns the bound port.
    public func start() async throws -> Int {
        _ = try verifier.get()
        let sslContext = try Self.makeSSLContext(configuration)
        if let path = configuration.recordFile {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            recordFile.withLock { $0 = FileHandle(forWritingAtPath: path) }
        }
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try self.configureConnection(channel, sslContext: sslContext)
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        serverChannel.withLock { $0 = channel }
        let port = channel.localAddress?.port ?? configuration.port
        logger.info("APNs simulator listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
        return port
    }

    /// Stops listening and closes every connection.
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
    }

    /// The notifications accepted (answered 200) so far, in order.
    public var records: [APNSSimulatorRecord] { state.withLock { $0.records } }

    /// Answers so far by `"<status>"` for 200 and `"<status> <reason>"` otherwise, plus `"silent"` for streams never
    /// answered on purpose.
    public var counts: [String: Int] { state.withLock { $0.counts } }

    /// How many different valid provider tokens (JWTs) the device, broadcast and channel endpoints were shown so
    /// far, together: a client that shares one token per key shows one. (A token is counted again only after the
    /// verdict cache, 4,096 tokens, is cleared.)
    public var providerTokensSeen: Int { state.withLock { $0.validTokensSeen } }

    /// The broadcasts accepted (answered 200) so far, in order.
    public var broadcasts: [APNSSimulatorBroadcastRecord] { state.withLock { $0.broadcasts } }

    /// The channels `bundleID` holds now, in creation order.
    public func channels(bundleID: String) -> [APNSSimulatorChannel] {
        channelRegistry.withLock { $0.list(bundleID: bundleID) }
    }

    /// Creates a channel as `POST /1/apps/<bundle>/channels` would, without a request and without the quota, so that
    /// a test can start from channels that exist.
    @discardableResult
    public func addChannel(bundleID: String, messageStoragePolicy: Int) -> APNSSimulatorChannel {
        let result = channelRegistry.withLock {
            $0.create(
                bundleID: bundleID, messageStoragePolicy: messageStoragePolicy,
                pushType: BroadcastValidation.channelPushType, maximum: .max, now: configuration.nowMilliseconds())
        }
        guard case .created(let channel) = result else { preconditionFailure("a channel without quota is created") }
        return channel
    }

    /// Waits until at least `count` notifications were accepted. Returns early if the task is cancelled.
    public func waitForRecords(count: Int) async {
        await wait(.records, count: count)
    }

    /// Waits until at least `count` broadcasts were accepted. Returns early if the task is cancelled.
    public func waitForBroadcasts(count: Int) async {
        await wait(.broadcasts, count: count)
    }

    private func wait(_ kind: SimulatorState.WaitKind, count: Int) async {
        enum Registration {
            case initial
            case waiting(Int)
            case done
        }
        let registration = Mutex(Registration.initial)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                registration.withLock { registration in
                    guard case .initial = registration else {
                        continuation.resume()
                        return
                    }
                    if let id = state.withLock({ $0.addWaiter(kind, count: count, continuation: continuation) }) {
                        registration = .waiting(id)
                    } else {
                        registration = .done
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            registration.withLock { registration in
                if case .waiting(let id) = registration {
                    state.withLock { $0.removeWaiter(id) }?.resume()
                }
                registration = .done
            }
        }
    }

    /// Counts by status and reason, one per line, for printing on exit.
    public func summary() -> String {
        let counts = self.counts
        let total = counts.values.reduce(0, +)
        var lines = ["APNs simulator: \(total) requests"]
        for key in counts.keys.sorted() { lines.append("  \(key): \(counts[key]!)") }
        return lines.joined(separator: "\n")
    }

    // MARK: Connections

    private static func makeSSLContext(_ configuration: APNSSimulatorConfiguration) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(configuration.certificateChainPEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(configuration.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if !configuration.clientCertificateTrustRootsPEM.isEmpty {
            // A server that verifies peers also refuses a handshake without a client certificate.
            tls.certificateVerification = .noHostnameVerification
            let roots = try configuration.clientCertificateTrustRootsPEM.flatMap {
                try NIOSSLCertificate.fromPEMBytes(Array($0.utf8))
            }
            tls.trustRoots = .certificates(roots)
        }
        return try NIOSSLContext(configuration: tls)
    }

    private func configureConnection(_ channel: any Channel, sslContext: NIOSSLContext) throws {
        let connection = ConnectionState(channel: channel, configuration: configuration)
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(AbruptCloseHandler(connection: connection))
        try operations.addHandler(NIOSSLServerHandler(context: sslContext))

        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        let advertised = configuration.maxConcurrentStreamsUntilAuthenticated ?? configuration.maxConcurrentStreams
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: advertised),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16384),
        ]
        if let headerTableSize = configuration.headerTableSize {
            connectionConfiguration.initialSettings.append(
                HTTP2Setting(parameter: .headerTableSize, value: headerTableSize))
        }
        let boundConnection = NIOLoopBound(connection, eventLoop: channel.eventLoop)
        _ = try operations.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: connectionConfiguration,
            streamConfiguration: .init()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                    StreamHandler(simulator: self, connection: boundConnection.value)
                )
            }
        }

        let id = ObjectIdentifier(channel)
        connections.withLock { $0[id] = channel }
        logger.debug("APNs simulator connection opened")
        channel.closeFuture.whenComplete { _ in
            self.connections.withLock { $0[id] = nil }
            self.logger.debug("APNs simulator connection closed")
        }
    }
}
