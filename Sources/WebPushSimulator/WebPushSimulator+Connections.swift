import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

extension WebPushSimulator {
    static func makeSSLContext(_ configuration: WebPushSimulatorConfiguration) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(configuration.certificateChainPEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(configuration.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols =
            !configuration.speaksHTTP2 ? ["http/1.1"] : configuration.acceptsHTTP1 ? ["h2", "http/1.1"] : ["h2"]
        return try NIOSSLContext(configuration: tls)
    }

    func bind(sslContext: NIOSSLContext) async throws -> any Channel {
        try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    NIOLoopBound(
                        try self.configureConnection(channel, sslContext: sslContext), eventLoop: channel.eventLoop)
                }.flatMap { connection in
                    self.configureProtocols(channel, connection: connection)
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
    }

    /// TLS below, and the connection's shared state; the protocol handlers follow once ALPN has spoken.
    private func configureConnection(_ channel: any Channel, sslContext: NIOSSLContext) throws -> ConnectionState {
        let connection = ConnectionState(channel: channel, dropAfter: configuration.dropConnectionAfterRequests)
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(AbruptCloseHandler(connection: connection))
        try operations.addHandler(NIOSSLServerHandler(context: sslContext))

        let id = ObjectIdentifier(channel)
        connections.withLock { $0[id] = channel }
        opened.withLock { $0 += 1 }
        logger.debug("Web Push simulator connection opened")
        channel.closeFuture.whenComplete { _ in
            self.connections.withLock { $0[id] = nil }
            self.logger.debug("Web Push simulator connection closed")
        }
        return connection
    }

    /// `h2`: one ``RequestHandler`` per stream behind NIO's HTTP/2-to-HTTP/1 codec; `http/1.1` (or no ALPN), and
    /// every connection of a service that does not speak HTTP/2: NIO's HTTP/1 server pipeline and one handler for
    /// the connection.
    private func configureProtocols(_ channel: any Channel, connection: NIOLoopBound<ConnectionState>)
        -> EventLoopFuture<Void>
    {
        let maxConcurrentStreams = configuration.maxConcurrentStreams
        guard configuration.speaksHTTP2 else {
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandler(
                    RequestHandler(simulator: self, connection: connection.value, httpVersion: "HTTP/1.1"))
            }
        }
        return channel.configureHTTP2SecureUpgrade(
            h2ChannelConfigurator: { channel in
                channel.eventLoop.makeCompletedFuture {
                    var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                    connectionConfiguration.initialSettings = [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
                        HTTP2Setting(parameter: .maxHeaderListSize, value: 16384),
                    ]
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(
                                RequestHandler(simulator: self, connection: connection.value, httpVersion: "HTTP/2"))
                        }
                    }
                }
            },
            http1ChannelConfigurator: { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(simulator: self, connection: connection.value, httpVersion: "HTTP/1.1"))
                }
            })
    }
}
