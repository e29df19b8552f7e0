import ArgumentParser
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOPosix
import PushTransport

/// `herald bench fcm`: `FCMClient` alone against a fast HTTP/2 sink, for comparison with `h2load` sending an
/// FCM-shaped request of the same size in the same shape (10 connections × 100 streams: Google's front end allows
/// 100 streams a connection).
///
/// The sink does not check the bearer token, so a fixed one stands in for the minted access token: what is measured
/// is the client, as `herald bench apns` measures APNs'.
struct BenchFCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm",
        abstract: "Send N messages through FCMClient to an HTTP/2 sink; print sends/s, p50/p99 and CPU seconds."
    )

    @Option(help: "The sink, e.g. https://127.0.0.1:58443 (deploy/dev/sink.sh start).")
    var endpoint = "https://127.0.0.1:58443"

    @Option(help: "CA of the sink's certificate (PEM).") var caFile = ".state/demo/ca.pem"
    @Option(help: "HTTP/2 connections.") var connections = 10
    @Option(help: "Requests in flight per connection (at most 100, as FCM allows).") var streams = 100
    @Option(help: "Messages to send.") var count = 300_000
    @Option(help: "Event-loop threads.") var threads = 1
    @Option(help: "Request body size in bytes.") var size = 250
    @Option(help: "Write the request body used to this file (for h2load -d).") var writeBody: String?
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func run() async throws {
        guard connections > 0, (1...100).contains(streams), count > 0, threads > 0, size >= 120 else {
            throw ValidationError("--connections, --count, --threads positive; --streams 1…100; --size ≥ 120")
        }
        guard let url = URL(string: endpoint), let host = url.host else {
            throw ValidationError("--endpoint must be a URL like https://127.0.0.1:58443")
        }
        let ca = try String(contentsOfFile: caFile, encoding: .utf8)
        var configuration = FCMClientConfiguration(
            endpoint: HTTP2Endpoint(host: host, port: url.port ?? 443), projectID: "herald-bench",
            additionalTrustRootsPEM: [ca], connections: connections)
        configuration.maximumStreamsPerConnection = streams
        configuration.maximumQueuedRequests = connections * streams
        configuration.requestTimeout = .seconds(60)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var logger = Logger(label: "herald.bench.fcm")
        logger.logLevel = .error
        let client = FCMClient(
            configuration: configuration, tokens: FixedToken(), eventLoopGroup: group, logger: logger)
        let body = Self.makeBody(size: size)
        if let writeBody { try Data(body).write(to: URL(fileURLWithPath: writeBody)) }

        // Warm up: open every connection.
        try await withThrowingTaskGroup(of: Void.self) { warmup in
            for _ in 0..<(connections * 2) { warmup.addTask { _ = try await client.send(body) } }
            try await warmup.waitForAll()
        }

        let cpuBefore = CPUTime.ofThisProcess()
        let start = NIODeadline.now()
        let times = RequestTimes(count: count)
        let answers = await client.sendAll(
            count: count, concurrency: min(connections * streams, count),
            body: { index in
                times.sent(index)
                return body
            },
            onAnswer: { index, _ in times.answered(index) })
        let seconds = Double((NIODeadline.now() - start).nanoseconds) / 1e9
        let cpu = CPUTime.ofThisProcess() - cpuBefore
        let failed = answers.count { answer in
            guard case .success(let response) = answer else { return true }
            return response.status != 200
        }
        await client.shutdown()
        try await group.shutdownGracefully()

        let sorted = times.latencies().sorted()
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
        }
        let rate = Double(count) / seconds
        if json {
            let fields: [(String, String)] = [
                ("count", "\(count)"), ("connections", "\(connections)"), ("streams", "\(streams)"),
                ("size", "\(body.count)"), ("seconds", String(format: "%.3f", seconds)),
                ("sends_per_second", String(format: "%.0f", rate)),
                ("p50_ms", String(format: "%.3f", percentile(0.50))),
                ("p99_ms", String(format: "%.3f", percentile(0.99))),
                ("cpu_seconds", String(format: "%.3f", cpu)),
                ("cpu_us_per_notification", String(format: "%.2f", cpu * 1e6 / Double(max(count, 1)))),
                ("failed", "\(failed)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("bench fcm: \(count) sends, \(connections) connection(s) × \(streams) streams, \(threads) thread(s)")
            print(
                String(
                    format: "  %.0f sends/s in %.3f s; p50 %.3f ms, p99 %.3f ms; CPU %.3f s; %d not 200",
                    rate, seconds, percentile(0.50), percentile(0.99), cpu, failed))
        }
    }

    /// A `messages:send` body of exactly `size` bytes: a registration token of the usual length, a notification, and
    /// data filled to the size.
    static func makeBody(size: Int) -> [UInt8] {
        let token = "dXq7:APA91b" + String(repeating: "Fk3_Hs-9", count: 18) + "Zz"
        let prefix = #"{"message":{"token":""# + token + #"","android":{"priority":"HIGH"},"data":{"k":""#
        let suffix = #""}}}"#
        let filler = String(repeating: "x", count: max(0, size - prefix.utf8.count - suffix.utf8.count))
        return Array((prefix + filler + suffix).utf8)
    }
}

/// The bench's access token: the sink does not check it.
private struct FixedToken: FCMAccessTokens {
    func currentToken() async throws -> String { "ya29.bench-" + String(repeating: "t", count: 180) }
    func rejected(_ token: String) {}
}
