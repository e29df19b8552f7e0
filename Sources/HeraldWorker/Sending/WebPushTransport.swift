import APNSCore
import HeraldCore
import Logging
import NIOCore
import PushTransport
import Synchronization
import WebPushCore

/// An app's Web Push side: its VAPID key's token cache (one token per push service origin, signed once and renewed
/// an hour before it expires, WEBPUSH.md) and one ``WebPushOriginTransport`` per push service origin its
/// subscriptions live at, opened on first use. Push services are a handful of origins for millions of
/// subscriptions; at most ``maximumOrigins`` are served at once (a device at another fails with `TooManyOrigins`).
final class WebPushTransports: Sendable {
    /// The most push service origins an app's clients connect to.
    static let maximumOrigins = 64

    let tokens: VAPIDTokenCache
    /// The app's Web Push settings.
    let settings: AppConfiguration.WebPush
    private let trustRootsPEM: [String]
    private let requestTimeout: Duration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let clock: HeraldClock
    private let origins = Mutex<[String: WebPushOriginTransport]>([:])

    init(
        key: VAPIDKey, subject: VAPIDSubject, settings: AppConfiguration.WebPush, trustRootsPEM: [String],
        requestTimeout: Duration, eventLoopGroup: any EventLoopGroup, logger: Logger, clock: HeraldClock
    ) {
        self.tokens = VAPIDTokenCache(key: key, subject: subject, now: { clock.unixSeconds })
        self.settings = settings
        self.trustRootsPEM = trustRootsPEM
        self.requestTimeout = requestTimeout
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.clock = clock
    }

    /// The transport to `endpoint`'s origin, opened now if it is the first; nil past ``maximumOrigins``.
    func transport(for endpoint: WebPushEndpoint) -> WebPushOriginTransport? {
        origins.withLock { origins in
            if let open = origins[endpoint.origin] { return open }
            guard origins.count < Self.maximumOrigins else { return nil }
            let host =
                endpoint.host.hasPrefix("[") ? String(endpoint.host.dropFirst().dropLast()) : endpoint.host
            var configuration = WebPushClientConfiguration(
                endpoint: HTTP2Endpoint(host: host, port: endpoint.port), additionalTrustRootsPEM: trustRootsPEM)
            configuration.requestTimeout = requestTimeout
            var originLogger = logger
            originLogger[metadataKey: "origin"] = "\(endpoint.origin)"
            let origin = endpoint.origin
            let tokens = self.tokens
            let authorization: @Sendable () -> String = { tokens.token(for: origin).authorization }
            let client = WebPushClient(
                configuration: configuration, authorization: authorization, eventLoopGroup: eventLoopGroup,
                logger: originLogger)
            let group = eventLoopGroup
            let (settings, http1Logger) = (configuration, originLogger)
            let transport = WebPushOriginTransport(
                client: client,
                http1: {
                    WebPushHTTP1Client(
                        configuration: settings, authorization: authorization, eventLoopGroup: group,
                        logger: http1Logger)
                }, clock: clock, logger: originLogger)
            origins[endpoint.origin] = transport
            return transport
        }
    }

    /// Shuts every origin's client down.
    func shutdown() async {
        let open = origins.withLock { Array($0.values) }
        for transport in open { await transport.shutdown() }
    }
}

/// One push service origin's client as a `NotificationTransport`: its answers read with WebPushCore in the
/// provider-neutral terms, its table Web Push's. A 429 or 503 with `Retry-After` pauses the origin: until then this
/// transport sends nothing more to it and answers each request it holds back as the service would (the status, the
/// time left), so that those devices wait in the delay queues with the rest, not in a worker (WEBPUSH.md: back off
/// that service).
///
/// A service that does not speak HTTP/2 (its TLS handshake agrees to no `h2`) is sent to over HTTP/1.1 with
/// keep-alive from then on (``WebPushHTTP1Client``): the requests that found it out were never sent, and go again
/// over HTTP/1.1 at once.
final class WebPushOriginTransport: NotificationTransport {
    let client: WebPushClient
    private let makeHTTP1: @Sendable () -> WebPushHTTP1Client
    /// HTTP/2 until the origin shows it does not speak it, then its HTTP/1.1 client; none after shutdown.
    private let http1 = Mutex<HTTP1State>(.unused)

    private enum HTTP1State {
        case unused
        case using(WebPushHTTP1Client)
        case shutDown
    }
    private let clock: HeraldClock
    private let logger: Logger
    /// The origin's wait after a 429 or 503.
    private let pause: ProviderPause

    init(
        client: WebPushClient, http1: @escaping @Sendable () -> WebPushHTTP1Client, clock: HeraldClock,
        logger: Logger
    ) {
        self.client = client
        self.makeHTTP1 = http1
        self.clock = clock
        self.logger = logger
        self.pause = ProviderPause(
            reason: ProviderReason(rawValue: Self.originPause, provider: "Web Push"), clock: clock)
    }

    /// The HTTP/1.1 client if the origin needs it.
    private var currentHTTP1: WebPushHTTP1Client? {
        http1.withLock { state in
            if case .using(let client) = state { return client }
            return nil
        }
    }

    /// The HTTP/1.1 client, made the first time a connection showed that the origin does not speak HTTP/2; nil once
    /// the transport is shut down (no client is made that nothing would shut down).
    private func switchToHTTP1() -> WebPushHTTP1Client? {
        let (client, made) = http1.withLock { state -> (WebPushHTTP1Client?, Bool) in
            switch state {
            case .using(let client): return (client, false)
            case .shutDown: return (nil, false)
            case .unused:
                let made = makeHTTP1()
                state = .using(made)
                return (made, true)
            }
        }
        if made {
            logger.notice("the push service does not speak HTTP/2: HTTP/1.1 with keep-alive from now on")
        }
        return client
    }

    /// Shuts the origin's clients down; no HTTP/1.1 client is made after this.
    func shutdown() async {
        let http1 = self.http1.withLock { state -> WebPushHTTP1Client? in
            defer { state = .shutDown }
            if case .using(let client) = state { return client }
            return nil
        }
        await client.shutdown()
        if let http1 { await http1.shutdown() }
    }

    /// What a request held for HTTP/1.1 gets once the transport is shut down.
    private static let shutDownFailure = TransportFailure(code: TransportError.Code.shutDown.description)

    /// The reason of a request held back while the origin waits.
    static let originPause = "OriginPause"

    func transportAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> WebPushWireRequest?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?] {
        if let held = pause.heldBack() {
            return (0..<count).map { index in
                guard request(index) != nil else { return nil }
                onAnswer(index, .success(held))
                return .success(held)
            }
        }
        let clock = self.clock
        if let http1 = currentHTTP1 {
            return await sendHTTP1(
                http1, Array(0..<count), concurrency: concurrency, request: request, onAnswer: onAnswer)
        }
        // Requests a connection refused for want of HTTP/2 were never sent: they are not answered here but sent
        // again over HTTP/1.1 below.
        let notH2 = Mutex<[Int]>([])
        let answers = await client.sendAll(count: count, concurrency: concurrency, request: request) {
            [self] index, answer in
            if case .failure(let error) = answer, error.code == .alpnNotH2 {
                notH2.withLock { $0.append(index) }
                return
            }
            let neutral = Self.neutral(answer, clock: clock)
            notePause(neutral)
            onAnswer(index, neutral)
        }
        var results = answers.map { $0.map { Self.neutral($0, clock: clock) } }
        let refused = notH2.withLock { $0 }.sorted()
        guard !refused.isEmpty else { return results }
        guard let http1 = switchToHTTP1() else {
            for index in refused {
                results[index] = .failure(Self.shutDownFailure)
                onAnswer(index, .failure(Self.shutDownFailure))
            }
            return results
        }
        let resent = await sendHTTP1(http1, refused, concurrency: concurrency, request: request, onAnswer: onAnswer)
        for (position, index) in refused.enumerated() { results[index] = resent[position] }
        return results
    }

    /// Sends the requests at `indices` over HTTP/1.1; the results are in the order of `indices`.
    private func sendHTTP1(
        _ http1: WebPushHTTP1Client, _ indices: [Int], concurrency: Int,
        request: @escaping @Sendable (Int) -> WebPushWireRequest?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?] {
        let clock = self.clock
        let answers = await http1.sendAll(
            count: indices.count, concurrency: concurrency, request: { request(indices[$0]) },
            onAnswer: { [self] position, answer in
                let neutral = Self.neutral(answer, clock: clock)
                notePause(neutral)
                onAnswer(indices[position], neutral)
            })
        return answers.map { $0.map { Self.neutral($0, clock: clock) } }
    }

    func transport(_ request: WebPushWireRequest) async throws(TransportFailure) -> ProviderAnswer {
        if let held = pause.heldBack() { return held }
        do {
            let answer = Self.answer(try await send(request), clock: clock)
            notePause(.success(answer))
            return answer
        } catch {
            throw TransportFailure(code: error.code.description)
        }
    }

    /// One push over HTTP/2, or over HTTP/1.1 once the origin needs it (this push included, if it found that out).
    private func send(_ request: WebPushWireRequest) async throws(TransportError) -> WireResponse {
        if let http1 = currentHTTP1 { return try await http1.send(request) }
        do {
            return try await client.send(request)
        } catch {
            guard error.code == .alpnNotH2 else { throw error }
        }
        guard let http1 = switchToHTTP1() else {
            throw TransportError(.shutDown, "the Web Push transport is shut down")
        }
        return try await http1.send(request)
    }

    /// A 429 or 503 with a `Retry-After`: the whole origin waits until then.
    private func notePause(_ answer: Result<ProviderAnswer, TransportFailure>) {
        guard case .success(let answer) = answer, answer.status == 429 || answer.status == 503 else { return }
        pause.pause(for: answer)
    }

    var settlement: any SettlementTable { WebPushSettlementTable() }

    static func answer(_ response: WireResponse, clock: HeraldClock) -> ProviderAnswer {
        if response.status == 201 { return ProviderAnswer(status: 201) }
        return ProviderAnswer(
            WebPushAnswer(
                status: response.status, retryAfter: response.retryAfter, body: response.body,
                now: clock.unixSeconds))
    }

    private static func neutral(_ answer: Result<WireResponse, TransportError>, clock: HeraldClock) -> Result<
        ProviderAnswer, TransportFailure
    > {
        switch answer {
        case .success(let response): .success(Self.answer(response, clock: clock))
        case .failure(let error): .failure(TransportFailure(code: error.code.description))
        }
    }
}

/// A share's Web Push requests, all to one origin: the job's payload written once per variant (locale and badge),
/// each device's copy encrypted for its subscription when its request is made (a fresh key and salt per message,
/// RFC 8291), on the event loop that sends it.
final class WebPushRequestList: RequestSource {
    let tokens: [DeviceToken]
    private let subscriptions: [WebPushSubscription]
    private let payloads: [[UInt8]]
    /// Each device's payload index when devices get different payloads; nil: all get the first.
    private let variantOf: [Int]?
    private let ttl: Int
    private let urgency: String
    private let topic: String?

    init(
        subscriptions: [WebPushSubscription], tokens: [DeviceToken], payloads: [[UInt8]], variantOf: [Int]?,
        ttl: Int, urgency: WebPushUrgency, topic: WebPushTopic?
    ) {
        self.subscriptions = subscriptions
        self.tokens = tokens
        self.payloads = payloads
        self.variantOf = variantOf
        self.ttl = ttl
        self.urgency = urgency.headerValue
        self.topic = topic?.value
    }

    subscript(index: Int) -> WebPushWireRequest {
        let subscription = subscriptions[index]
        // Every payload was checked against the plaintext limit when the list was made, and the keys when the
        // subscription was registered: encryption cannot fail but for a broken random source. An empty body then
        // gets the service's 400, which fails that device alone.
        let body =
            (try? WebPushEncryption.encrypt(payloads[variantOf?[index] ?? 0], for: subscription.keys)) ?? []
        return WebPushWireRequest(
            path: subscription.endpoint.path, ttl: ttl, urgency: urgency, topic: topic, body: body)
    }
}
