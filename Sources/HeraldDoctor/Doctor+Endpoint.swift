import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

extension Doctor {
    /// The endpoint answers TLS with a certificate trusted by the system roots plus the app's `ca_file` (verification
    /// is never switched off), agrees to HTTP/2 by ALPN, and answers the HTTP/2 preface with its SETTINGS. A
    /// certificate app presents its certificate, so an endpoint that refuses it fails here. Nothing is sent.
    func checkEndpoint(
        host: String, port: Int, environment: String, roots: [NIOSSLCertificate], caFile: String?,
        identity: ClientIdentity?, subject: String
    ) async -> DoctorFinding {
        let endpoint = "the \(environment) endpoint \(host):\(port)"
        let trust = caFile.map { "the system roots and ca_file \($0)" } ?? "the system roots"
        let fixEndpoint = "check endpoint / endpoints in the apps file and the firewall (APNs listens on 443 and 2197)"
        do {
            try await probeHTTP2(host: host, port: port, roots: roots, identity: identity)
            return .pass(subject, "\(endpoint) answers TLS + HTTP/2 (ALPN h2) with a certificate trusted by \(trust)")
        } catch let failure as DoctorProbeFailure {
            switch failure {
            case .protocolNegotiated(let chosen):
                return .fail(
                    subject,
                    "\(endpoint) completed TLS but did not agree to HTTP/2 (ALPN h2; it chose \(chosen ?? "nothing")): "
                        + "it is not an APNs host; \(fixEndpoint)")
            case .notHTTP2:
                return .fail(
                    subject, "\(endpoint) agreed to HTTP/2 but did not answer the preface with SETTINGS: \(fixEndpoint)"
                )
            case .timedOut:
                return .fail(
                    subject,
                    "\(endpoint) did not complete TLS + HTTP/2 within \(deployment.timeout.components.seconds) s: "
                        + fixEndpoint)
            }
        } catch {
            switch DoctorNetworkReason.tls(error) {
            case .untrusted:
                return .fail(
                    subject,
                    "the certificate of \(endpoint) is not trusted by \(trust), or does not name \(host): set ca_file "
                        + "to the CA that signed it (Apple's hosts need none), or fix endpoint in the apps file")
            case .alert(let name):
                return .fail(
                    subject,
                    "\(endpoint) ended the TLS handshake with the alert \"\(name)\": "
                        + Self.refusal(alert: name, identity: identity, fix: fixEndpoint))
            case .notTLS, .failed, nil:
                return .fail(
                    subject, "cannot reach \(endpoint) (\(DoctorNetworkReason.describe(error))): \(fixEndpoint)")
            }
        }
    }

    /// What an alert in the handshake means for this app.
    static func refusal(alert: String, identity: ClientIdentity?, fix: String) -> String {
        if let identity {
            return "it refused the client certificate of p12_file \(identity.file): is it the APNs certificate of this "
                + "topic and environment?"
        }
        if alert.contains("certificate") {
            return "it requires a client certificate, which a token app does not present: check endpoint in the apps "
                + "file, or give the app certificate auth"
        }
        return "it refused the handshake: \(fix)"
    }

    /// Connects, completes TLS with ALPN `h2`, writes the HTTP/2 client preface with an empty SETTINGS frame and
    /// waits for the server's first frame, which must be SETTINGS; then closes.
    func probeHTTP2(
        host: String, port: Int, roots: [NIOSSLCertificate], identity: ClientIdentity?
    ) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .default
        if !roots.isEmpty { tls.additionalTrustRoots = [.certificates(roots)] }
        if let identity {
            tls.certificateChain = identity.chain.map { .certificate($0) }
            tls.privateKey = .privateKey(identity.key)
        }
        let context = try NIOSSLContext(configuration: tls)
        // NIOSSL refuses IP literals as SNI; without a server name it checks the certificate against the peer's IP.
        let serverName = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        let eventLoop = eventLoopGroup.next()
        let answered = eventLoop.makePromise(of: Void.self)
        let timeout = TimeAmount(deployment.timeout)
        let deadline = eventLoop.scheduleTask(in: timeout) { answered.fail(DoctorProbeFailure.timedOut) }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandlers(handler, DoctorHTTP2Probe(answered: answered))
                }
            }
        bootstrap.connect(host: host, port: port).whenComplete { result in
            switch result {
            case .success(let channel):
                answered.futureResult.whenComplete { _ in channel.close(promise: nil) }
            case .failure(let error):
                answered.fail(error)
            }
        }
        defer { deadline.cancel() }
        try await answered.futureResult.get()
    }
}

/// How an endpoint that speaks TLS fails the HTTP/2 check.
enum DoctorProbeFailure: Error {
    /// ALPN chose another protocol than h2, or none.
    case protocolNegotiated(String?)
    /// The first frame was not the server's SETTINGS.
    case notHTTP2
    /// The connect, the handshake or the answer took longer than the limit.
    case timedOut
}

/// Above NIOSSL: once the handshake has chosen `h2`, sends the client preface and an empty SETTINGS frame, and
/// succeeds when the server's first frame header is a SETTINGS frame on stream 0. Completes `answered` once, with
/// the first of: that answer, a TLS or I/O error, or the connection closing.
final class DoctorHTTP2Probe: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answered: EventLoopPromise<Void>
    private var received = ByteBuffer()
    private var done = false

    init(answered: EventLoopPromise<Void>) { self.answered = answered }

    /// The connection preface (RFC 9113 §3.4) and an empty SETTINGS frame: length 0, type 4, flags 0, stream 0.
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard negotiated == "h2" else {
            finish(.failure(DoctorProbeFailure.protocolNegotiated(negotiated)))
            return
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: Self.preface)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        // A frame header: length (3 bytes), type, flags, stream id (4 bytes).
        guard received.readableBytes >= 9, let type = received.getInteger(at: received.readerIndex + 3, as: UInt8.self),
            let stream = received.getInteger(at: received.readerIndex + 5, as: UInt32.self)
        else { return }
        finish(type == 4 && stream & 0x7FFF_FFFF == 0 ? .success(()) : .failure(DoctorProbeFailure.notHTTP2))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.eof))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !done else { return }
        done = true
        answered.completeWith(result)
    }
}
