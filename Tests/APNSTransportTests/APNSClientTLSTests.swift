import APNSCore
import HeraldTestSupport
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PushTransport
import Testing

/// TLS: verification is always on, the extra CA is the only way to trust a private server, and ALPN must say h2.
@Suite struct APNSClientTLSTests {
    @Test func serverSignedByAnUntrustedCAFailsTheHandshakeClearly() async throws {
        try await SimulatorFixture.with { _ in
        } client: { client in
            client.additionalTrustRootsPEM = [TestCredentials.unrelatedCACertificatePEM]
        } _: { fixture in
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest())
            }
            #expect(error?.code == .tlsFailed)
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func withoutTheExtraCATheSystemRootsDoNotTrustTheTestServer() async throws {
        try await SimulatorFixture.with { _ in
        } client: { client in
            client.additionalTrustRootsPEM = []
        } _: { fixture in
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest())
            }
            #expect(error?.code == .tlsFailed)
        }
    }

    @Test func invalidTrustRootPEMFailsEverySendWithoutConnecting() async throws {
        try await SimulatorFixture.with { _ in
        } client: { client in
            client.additionalTrustRootsPEM = ["not a certificate"]
        } _: { fixture in
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest())
            }
            #expect(error?.code == .tlsFailed)
        }
    }

    @Test func serverWithoutHTTP2ALPNFailsWithAlpnNotH2() async throws {
        let server = try await TLSOnlyServer.start(applicationProtocols: ["http/1.1"])
        let client = makeClient(port: server.port)
        let error = await #expect(throws: TransportError.self) {
            try await client.send(makeRequest())
        }
        #expect(error?.code == .alpnNotH2)
        await client.shutdown()
        try await server.stop()
    }

    @Test func connectionRefusedFailsWithConnectFailed() async throws {
        // Bind and close a port so that nothing listens on it.
        let server = try await TLSOnlyServer.start(applicationProtocols: ["h2"])
        let port = server.port
        try await server.stop()
        let client = makeClient(port: port)
        let error = await #expect(throws: TransportError.self) {
            try await client.send(makeRequest())
        }
        #expect(error?.code == .connectFailed)
        await client.shutdown()
    }

    @Test func serverThatNeverSpeaksHTTP2TimesOutInsteadOfHanging() async throws {
        // TLS with ALPN h2 completes, then the server swallows everything.
        let server = try await TLSOnlyServer.start(applicationProtocols: ["h2"])
        let client = makeClient(port: server.port, timeout: .milliseconds(300))
        let error = await #expect(throws: TransportError.self) {
            try await client.send(makeRequest())
        }
        #expect(error?.code == .timeout)
        await client.shutdown()
        try await server.stop()
    }

    @Test func deadConnectionIsDetectedByPingBeforeTheRequestTimeout() async throws {
        let server = try await TLSOnlyServer.start(applicationProtocols: ["h2"])
        let client = makeClient(port: server.port, timeout: .seconds(60), pingInterval: .milliseconds(100))
        let error = await #expect(throws: TransportError.self) {
            try await client.send(makeRequest())
        }
        #expect(error?.code == .connectionClosed)
        #expect((error?.underlying as? TransportError)?.message == "the server did not answer a PING")
        await client.shutdown()
        try await server.stop()
    }

    private func makeClient(
        port: Int,
        timeout: Duration = .seconds(10),
        pingInterval: Duration? = .seconds(60)
    ) -> APNSClient {
        let signer = try! ProviderTokenSigner(
            teamID: TestCredentials.teamID,
            keyID: TestCredentials.keyID,
            pemKey: TestCredentials.providerKeyPEM
        )
        var configuration = APNSClientConfiguration(
            endpoint: .init(host: "127.0.0.1", port: port),
            authentication: .token(ProviderTokenCache(signer: signer, now: { 1_800_000_000 })),
            additionalTrustRootsPEM: [TestCredentials.caCertificatePEM],
            connections: 1,
            requestTimeout: timeout
        )
        configuration.pingInterval = pingInterval
        return APNSClient(
            configuration: configuration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "apns-client")
        )
    }
}

/// A TLS server with the test certificate that completes the handshake and then ignores every byte.
struct TLSOnlyServer {
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    static func start(applicationProtocols: [String]) async throws -> TLSOnlyServer {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.serverCertificatePEM.utf8))
                .map { .certificate($0) },
            privateKey: .privateKey(
                try NIOSSLPrivateKey(bytes: Array(TestCredentials.serverPrivateKeyPEM.utf8), format: .pem))
        )
        tls.applicationProtocols = applicationProtocols
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TLSOnlyServer(channel: channel)
    }

    func stop() async throws {
        try await channel.close()
    }
}
