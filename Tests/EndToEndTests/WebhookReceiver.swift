import HeraldTestSupport
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// An app's webhook endpoint for the tests: HTTPS on loopback with the test CA's server certificate, recording every
/// POST and answering with the statuses it is given in turn (200 once they are used up, or always `status`).
/// A receiver that holds answers nothing until `release()`: a slow endpoint, without a clock.
final class WebhookReceiver: Sendable {
    struct Request: Sendable {
        let headers: [String: String]
        let body: [UInt8]
        /// The receiver's label, when several share one collector.
        var label = ""
    }

    /// Every request as it arrived (before it is answered).
    let requests: EventCollector<Request>
    private let answers: Mutex<[HTTPResponse.Status]>
    private let always: HTTPResponse.Status?
    private let label: String
    private let released = EventCollector<Bool>()

    private init(
        answers: [HTTPResponse.Status], always: HTTPResponse.Status?, label: String,
        requests: EventCollector<Request>
    ) {
        self.answers = Mutex(answers)
        self.always = always
        self.label = label
        self.requests = requests
    }

    /// Lets the held requests (and every later one) be answered.
    func release() { released.record(true) }

    /// Runs `body` with a receiver listening on `https://127.0.0.1:<port>/hook`, then stops it. With `hold`, requests
    /// are answered only after `release()`. `requests` may be shared with another receiver.
    static func with(
        answers: [HTTPResponse.Status] = [], always: HTTPResponse.Status? = nil, hold: Bool = false,
        label: String = "", requests: EventCollector<Request> = EventCollector(),
        _ body: (WebhookReceiver, Int) async throws -> Void
    ) async throws {
        let receiver = WebhookReceiver(answers: answers, always: always, label: label, requests: requests)
        if !hold { receiver.release() }
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            receiver.requests.record(
                Request(headers: headers, body: Array(buffer: buffer), label: receiver.label))
            _ = await receiver.released.wait { !$0.isEmpty }
            return Response(status: receiver.nextStatus())
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(TestCredentials.serverCertificatePEM.utf8))
                .map { .certificate($0) },
            privateKey: .privateKey(
                try NIOSSLPrivateKey(bytes: Array(TestCredentials.serverPrivateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["http/1.1"]
        let port = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .warning
        let app = Application(
            router: router, server: try .tls(.http1(), tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                port.continuation.yield(channel.localAddress?.port ?? 0)
                port.continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let running = Task { try await group.run() }
        var ports = port.stream.makeAsyncIterator()
        let bound = await ports.next() ?? 0
        do {
            try await body(receiver, bound)
        } catch {
            receiver.release()
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
        receiver.release()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

    private func nextStatus() -> HTTPResponse.Status {
        if let always { return always }
        return answers.withLock { $0.isEmpty ? .ok : $0.removeFirst() }
    }
}
