import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOPosix
import PushTransport
import Synchronization
import Testing
import WebPushCore
import WebPushSimulator

@testable import HeraldWorker

/// An origin's transport meeting a push service without HTTP/2 in the middle of a batch, against the Web Push
/// simulator on loopback (no broker or database): the requests the HTTP/2 connections could not send go again over
/// HTTP/1.1, each answered once, each result where its request was.
@Suite(.timeLimit(.minutes(2))) struct WebPushHTTP1FallbackTests {
    @Test func aBatchThatMeetsAServiceWithoutHTTP2IsSentOnceEachOverHTTP1() async throws {
        let key = VAPIDKey.generate()
        var configuration = WebPushSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM)
        configuration.speaksHTTP2 = false
        configuration.vapidPublicKeys = [key.applicationServerKey]
        var logger = Logger(label: "webpush-http1")
        logger.logLevel = .warning
        let simulator = WebPushSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        _ = try await simulator.start()
        let transports = WebPushTransports(
            key: key, subject: try VAPIDSubject("mailto:push@news.example"),
            settings: .init(vapidPrivateKeyFile: "unused.pem", subject: "mailto:push@news.example"),
            trustRootsPEM: [TestCredentials.caCertificatePEM], requestTimeout: .seconds(10),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, clock: .system)

        let subscriptions = try (0..<12).map { index in
            let made = simulator.makeSubscription(id: "b\(index)", applicationServerKey: key.applicationServerKey)
            return try WebPushSubscription(endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth)
        }
        let transport = try #require(transports.transport(for: subscriptions[0].endpoint))
        // Request 4 has none (a device the caller skips); every other one says which index it is.
        let request: @Sendable (Int) -> WebPushWireRequest? = { index in
            guard index != 4 else { return nil }
            let body = try? WebPushEncryption.encrypt(Array("message \(index)".utf8), for: subscriptions[index].keys)
            return WebPushWireRequest(
                path: subscriptions[index].endpoint.path, ttl: 60, urgency: "normal", topic: nil, body: body ?? [])
        }
        let answered = Mutex<[Int: Int]>([:])
        let results = await transport.transportAll(
            count: 12, concurrency: 12, request: request,
            onAnswer: { index, _ in answered.withLock { $0[index, default: 0] += 1 } })

        #expect(results.count == 12)
        #expect(results[4] == nil)
        for index in 0..<12 where index != 4 {
            guard case .success(let answer) = results[index] else {
                Issue.record("request \(index): \(String(describing: results[index]))")
                continue
            }
            #expect(answer.status == 201, "request \(index)")
        }
        #expect(
            answered.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<12).filter { $0 != 4 }.map { ($0, 1) }))
        // Each subscription got its own message once, over HTTP/1.1.
        let received = simulator.records.map {
            ($0.subscriptionID, $0.plaintext.map { String(decoding: $0, as: UTF8.self) })
        }
        #expect(received.count == 11)
        for (id, text) in received { #expect(text == "message \(id.dropFirst())", "subscription \(id)") }
        #expect(Set(simulator.requests.map(\.httpVersion)) == ["HTTP/1.1"])

        // After shutdown nothing is sent, and nothing is left open.
        await transports.shutdown()
        try await simulator.stop()
    }
}
