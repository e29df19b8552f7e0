import APNSCore
import ArgumentParser
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOPosix
import PushTransport

#if canImport(Glibc)
    import Glibc
#endif

/// `herald bench apns`: `APNSClient` alone against a fast HTTP/2 sink, for comparison with `h2load` in the same shape.
///
/// A fixed pool of connections × streams sender tasks, each looping over its share of `--count`, so at most that many
/// requests are in flight and the driver allocates nothing per request beyond what `send` itself does.
struct BenchAPNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns",
        abstract: "Send N notifications through APNSClient to an HTTP/2 sink; print sends/s, p50/p99 and CPU seconds."
    )

    @Option(help: "The sink, e.g. https://127.0.0.1:58443 (deploy/dev/sink.sh start).")
    var endpoint = "https://127.0.0.1:58443"

    @Option(help: "CA of the sink's certificate (PEM).") var caFile = ".state/demo/ca.pem"
    @Option(help: "A P-256 .p8 key to sign provider tokens with (the sink ignores auth).")
    var keyFile = ".state/demo/AuthKey_DEMOKEY123.p8"
    @Option(help: "HTTP/2 connections.") var connections = 1
    @Option(help: "Requests in flight per connection.") var streams = 1000
    @Option(help: "Notifications to send.") var count = 200_000
    @Option(help: "Event-loop threads.") var threads = 1
    @Option(help: "Payload size in bytes.") var size = 250
    @Flag(help: "Print one JSON object instead of text.") var json = false
    @Option(
        help: """
            How the requests go to the client: batch (one sendAll with connections × streams in flight, as the \
            worker's deliverer sends) or send (connections × streams tasks each calling send in a loop).
            """)
    var api = API.batch

    enum API: String, ExpressibleByArgument, CaseIterable {
        case batch, send
    }

    func run() async throws {
        guard connections > 0, streams > 0, count > 0, threads > 0, size >= 20 else {
            throw ValidationError("--connections, --streams, --count and --threads must be positive; --size ≥ 20")
        }
        guard let url = URL(string: endpoint), let host = url.host else {
            throw ValidationError("--endpoint must be a URL like https://127.0.0.1:58443")
        }
        let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        let ca = try String(contentsOfFile: caFile, encoding: .utf8)
        let signer = try ProviderTokenSigner(teamID: "BENCHTEAM1", keyID: "BENCHKEY01", pemKey: pem)
        let cache = ProviderTokenCache(signer: signer) { HeraldClock.system.unixSeconds }
        var configuration = APNSClientConfiguration(
            endpoint: .init(host: host, port: url.port ?? 443),
            authentication: .token(cache),
            additionalTrustRootsPEM: [ca],
            connections: connections
        )
        configuration.maximumQueuedRequests = connections * streams
        configuration.requestTimeout = .seconds(60)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var logger = Logger(label: "herald.bench.apns")
        logger.logLevel = .error
        let client = APNSClient(configuration: configuration, eventLoopGroup: group, logger: logger)
        let request = Self.makeRequest(size: size)

        // Warm up: open every connection and let the server raise its stream limit from 1.
        try await withThrowingTaskGroup(of: Void.self) { warmup in
            for _ in 0..<(connections * 2) { warmup.addTask { _ = try await client.send(request) } }
            try await warmup.waitForAll()
        }

        let cpuBefore = CPUTime.ofThisProcess()
        let start = NIODeadline.now()
        let senders = min(connections * streams, count)
        let (latencies, failed) =
            switch api {
            case .batch: await Self.sendBatch(client, request, count: count, concurrency: senders)
            case .send: try await Self.sendInTasks(client, request, count: count, tasks: senders)
            }
        let seconds = Double((NIODeadline.now() - start).nanoseconds) / 1e9
        let cpu = CPUTime.ofThisProcess() - cpuBefore
        await client.shutdown()
        try await group.shutdownGracefully()

        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
        }
        let rate = Double(count) / seconds
        if json {
            let fields: [(String, String)] = [
                ("count", "\(count)"), ("connections", "\(connections)"), ("streams", "\(streams)"),
                ("seconds", String(format: "%.3f", seconds)), ("sends_per_second", String(format: "%.0f", rate)),
                ("p50_ms", String(format: "%.3f", percentile(0.50))),
                ("p99_ms", String(format: "%.3f", percentile(0.99))),
                ("cpu_seconds", String(format: "%.3f", cpu)),
                ("cpu_us_per_notification", String(format: "%.2f", cpu * 1e6 / Double(max(count, 1)))),
                ("failed", "\(failed)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("bench apns: \(count) sends, \(connections) connection(s) × \(streams) streams, \(threads) thread(s)")
            let line = String(
                format: "  %.0f sends/s in %.3f s; p50 %.3f ms, p99 %.3f ms; CPU %.3f s; %d not 200",
                rate, seconds, percentile(0.50), percentile(0.99), cpu, failed
            )
            print(line)
        }
    }

    /// Sends `count` copies of `request` from `tasks` tasks, each calling `send` in a loop (one task wake-up per
    /// request); returns each request's latency and how many were not answered 200.
    static func sendInTasks(
        _ client: APNSClient,
        _ request: APNSRequest,
        count: Int,
        tasks senders: Int
    ) async throws -> ([Int64], Int) {
        try await withThrowingTaskGroup(of: ([Int64], Int).self) { tasks in
            for sender in 0..<senders {
                let share = count / senders + (sender < count % senders ? 1 : 0)
                tasks.addTask {
                    var latencies = [Int64]()
                    latencies.reserveCapacity(share)
                    var failed = 0
                    for _ in 0..<share {
                        let sent = NIODeadline.now()
                        let outcome = try await client.send(request)
                        latencies.append((NIODeadline.now() - sent).nanoseconds)
                        if outcome.status != 200 { failed += 1 }
                    }
                    return (latencies, failed)
                }
            }
            var all = [Int64]()
            all.reserveCapacity(count)
            var failed = 0
            for try await (some, failures) in tasks {
                all.append(contentsOf: some)
                failed += failures
            }
            return (all, failed)
        }
    }

    /// Sends `count` copies of `request` as one `sendAll` (the worker's deliverer's path: answers taken on the event
    /// loop, each sending the next request); returns each request's latency and how many were not answered 200.
    static func sendBatch(
        _ client: APNSClient,
        _ request: APNSRequest,
        count: Int,
        concurrency: Int
    ) async -> ([Int64], Int) {
        let times = RequestTimes(count: count)
        let answers = await client.sendAll(
            count: count,
            concurrency: concurrency,
            request: { index in
                times.sent(index)
                return request
            },
            onAnswer: { index, _ in times.answered(index) }
        )
        let failed = answers.count { answer in
            guard case .success(let outcome) = answer else { return true }
            return outcome.status != 200
        }
        return (times.latencies(), failed)
    }

    /// A 64-hex-digit token and a payload of exactly `size` bytes.
    static func makeRequest(size: Int) -> APNSRequest {
        let prefix = #"{"aps":{"alert":""#
        let suffix = #""}}"#
        let filler = String(repeating: "x", count: max(0, size - prefix.utf8.count - suffix.utf8.count))
        return APNSRequest(
            deviceToken: DeviceToken(trustedHex: String(repeating: "ab", count: 32)),
            topic: "com.example.bench",
            pushType: .alert,
            priority: .immediate,
            expiration: 0,
            payload: Array((prefix + filler + suffix).utf8)
        )
    }
}

/// When each request of a batch was handed to the client and answered, in nanoseconds of uptime: one slot per
/// request, each written by the client's callbacks for that request only (preallocated, so that recording costs the
/// run no allocation).
final class RequestTimes: @unchecked Sendable {
    private let sentAt: UnsafeMutableBufferPointer<UInt64>
    private let took: UnsafeMutableBufferPointer<Int64>

    init(count: Int) {
        sentAt = .allocate(capacity: count)
        sentAt.initialize(repeating: 0)
        took = .allocate(capacity: count)
        took.initialize(repeating: 0)
    }

    deinit {
        sentAt.deallocate()
        took.deallocate()
    }

    func sent(_ index: Int) { sentAt[index] = NIODeadline.now().uptimeNanoseconds }

    func answered(_ index: Int) {
        took[index] = Int64(NIODeadline.now().uptimeNanoseconds &- sentAt[index])
    }

    func latencies() -> [Int64] { Array(took) }
}
