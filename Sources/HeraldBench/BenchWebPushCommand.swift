import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOPosix
import PushTransport
import WebPushCore

/// `herald bench webpush`: `WebPushClient` alone against a fast HTTP/2 sink, each message encrypted for its own
/// subscription as the worker does it (RFC 8291: a fresh key and salt per message) with the origin's cached VAPID
/// token, for comparison with `h2load` posting an encrypted body of the same size in the same shape. It also times
/// the encryption alone, so the report says what share of the sender's CPU the encryption is.
struct BenchWebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Send N encrypted pushes through WebPushClient to an HTTP/2 sink; print sends/s, CPU and the "
            + "encryption's share."
    )

    @Option(help: "The sink, e.g. https://127.0.0.1:58443 (deploy/dev/sink.sh start).")
    var endpoint = "https://127.0.0.1:58443"

    @Option(help: "CA of the sink's certificate (PEM).") var caFile = ".state/demo/ca.pem"
    @Option(help: "HTTP/2 connections.") var connections = 4
    @Option(help: "Requests in flight per connection (at most 100).") var streams = 100
    @Option(help: "Messages to send.") var count = 100_000
    @Option(help: "Event-loop threads.") var threads = 2
    @Option(help: "Plaintext payload size in bytes (a browser payload of a job's alert is about 120).")
    var size = 120
    @Option(help: "Write one encrypted body to this file (for h2load -d).") var writeBody: String?
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func run() async throws {
        guard connections > 0, (1...100).contains(streams), count > 0, threads > 0,
            (1...WebPushEncryption.maximumPlaintextSize).contains(size)
        else {
            throw ValidationError(
                "--connections, --count, --threads positive; --streams 1…100; --size 1…"
                    + "\(WebPushEncryption.maximumPlaintextSize)")
        }
        guard let url = URL(string: endpoint), let host = url.host else {
            throw ValidationError("--endpoint must be a URL like https://127.0.0.1:58443")
        }
        let ca = try String(contentsOfFile: caFile, encoding: .utf8)
        var configuration = WebPushClientConfiguration(
            endpoint: HTTP2Endpoint(host: host, port: url.port ?? 443), additionalTrustRootsPEM: [ca],
            connections: connections)
        configuration.maximumStreamsPerConnection = streams
        configuration.maximumQueuedRequests = connections * streams
        configuration.requestTimeout = .seconds(60)

        // Subscriptions as browsers make them: a P-256 key and a 16-byte secret each (a thousand, used in turn).
        var generator = SystemRandomNumberGenerator()
        let subscriptions = try (0..<1000).map { _ in
            let key = P256.KeyAgreement.PrivateKey()
            let auth = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return try WebPushKeys(p256dh: Array(key.publicKey.x963Representation), auth: auth)
        }
        let payload = Array(
            (#"{"title":"Herald","body":""# + String(repeating: "x", count: max(0, size - 29)) + #""}"#).utf8)
        let origin = "https://\(host)" + (url.port.map { $0 == 443 ? "" : ":\($0)" } ?? "")
        let tokens = VAPIDTokenCache(
            key: VAPIDKey.generate(), subject: try VAPIDSubject("mailto:bench@herald.example"),
            now: { HeraldClock.system.unixSeconds })
        let origins = origin
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var logger = Logger(label: "herald.bench.webpush")
        logger.logLevel = .error
        let client = WebPushClient(
            configuration: configuration, authorization: { tokens.token(for: origins).authorization },
            eventLoopGroup: group, logger: logger)
        @Sendable func request(_ index: Int) -> WebPushWireRequest {
            let body = (try? WebPushEncryption.encrypt(payload, for: subscriptions[index % subscriptions.count])) ?? []
            return WebPushWireRequest(path: "/push/s\(index)", ttl: 86400, urgency: "normal", topic: nil, body: body)
        }
        if let writeBody { try Data(request(0).body).write(to: URL(fileURLWithPath: writeBody)) }

        // The encryption alone, on this thread: its CPU per message.
        let sample = min(count, 20_000)
        let encryptionBefore = CPUTime.ofThisThread()
        for index in 0..<sample { _ = try WebPushEncryption.encrypt(payload, for: subscriptions[index % 1000]) }
        let encryptionMicros = (CPUTime.ofThisThread() - encryptionBefore) * 1e6 / Double(sample)

        // Warm up: open every connection (as a worker's first batch does not get; the h2load runs get it too).
        try await withThrowingTaskGroup(of: Void.self) { warmup in
            for index in 0..<(connections * 2) { warmup.addTask { _ = try await client.send(request(index)) } }
            try await warmup.waitForAll()
        }

        let cpuBefore = CPUTime.ofThisProcess()
        let start = NIODeadline.now()
        let answers = await client.sendAll(
            count: count, concurrency: min(connections * streams, count), request: { request($0) },
            onAnswer: { _, _ in })
        let seconds = Double((NIODeadline.now() - start).nanoseconds) / 1e9
        let cpu = CPUTime.ofThisProcess() - cpuBefore
        let failed = answers.count { answer in
            guard case .success(let response) = answer else { return true }
            return response.status != 201
        }
        await client.shutdown()
        try await group.shutdownGracefully()

        let rate = Double(count) / seconds
        let cpuMicros = cpu * 1e6 / Double(count)
        let bodySize = request(0).body.count
        if json {
            let fields: [(String, String)] = [
                ("count", "\(count)"), ("connections", "\(connections)"), ("streams", "\(streams)"),
                ("threads", "\(threads)"), ("plaintext_size", "\(payload.count)"), ("body_size", "\(bodySize)"),
                ("seconds", String(format: "%.3f", seconds)), ("sends_per_second", String(format: "%.0f", rate)),
                ("cpu_seconds", String(format: "%.3f", cpu)),
                ("cpu_us_per_notification", String(format: "%.2f", cpuMicros)),
                ("encryption_us_per_notification", String(format: "%.2f", encryptionMicros)),
                ("encryption_share", String(format: "%.3f", encryptionMicros / cpuMicros)),
                ("vapid_tokens_signed", "\(tokens.signedCount)"), ("failed", "\(failed)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print(
                "bench webpush: \(count) pushes, \(connections) connection(s) × \(streams) streams, \(threads) thread(s)"
            )
            print(
                String(
                    format:
                        "  %.0f sends/s in %.3f s; CPU %.2f µs a push, of which encryption %.2f µs (%.0f%%); %d not 201",
                    rate, seconds, cpuMicros, encryptionMicros, 100 * encryptionMicros / cpuMicros, failed))
        }
    }
}
