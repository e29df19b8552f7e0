import HeraldTestSupport
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Connects with a bare swift-nio-http2 client (ALPN h2) and reads the server's initial SETTINGS, which
/// AsyncHTTPClient does not show.
enum SettingsProbe {
    /// The SETTINGS the server sent first.
    static func initialSettings(port: Int) async throws -> HTTP2Settings {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.caCertificatePEM.utf8)))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: HTTP2Settings.self)
        let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let operations = channel.pipeline.syncOperations
                try operations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: "localhost"))
                _ = try operations.configureHTTP2Pipeline(
                    mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                try operations.addHandler(SettingsHandler(promise: promise))
                return channel
            }
        }
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }
}

/// Completes the promise with the first non-ACK SETTINGS frame on the root stream.
private final class SettingsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let promise: EventLoopPromise<HTTP2Settings>
    private var completed = false

    init(promise: EventLoopPromise<HTTP2Settings>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !completed, case .settings(.settings(let settings)) = unwrapInboundIn(data).payload {
            completed = true
            promise.succeed(settings)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !completed {
            completed = true
            promise.fail(ChannelError.eof)
        }
        context.fireChannelInactive()
    }
}
