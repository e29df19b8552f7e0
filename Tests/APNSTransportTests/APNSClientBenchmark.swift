import APNSCore
import Foundation
import HeraldTestSupport
import Logging
import NIOCore
import NIOPosix
import PushTransport
import Testing

/// Throughput against an external HTTP/2 server (nginx or the simulator), only when `HERALD_APNS_BENCH_PORT` is set:
/// `HERALD_APNS_BENCH_PORT=18443 swift test -c release --filter APNSClientBenchmark`.
@Suite struct APNSClientBenchmark {
    static let port = ProcessInfo.processInfo.environment["HERALD_APNS_BENCH_PORT"].flatMap(Int.init)

    @Test(.enabled(if: port != nil)) func throughputOnOneConnection() async throws {
        let environment = ProcessInfo.processInfo.environment
        let total = environment["HERALD_APNS_BENCH_REQUESTS"].flatMap(Int.init) ?? 100_000
        let concurrency = environment["HERALD_APNS_BENCH_CONCURRENCY"].flatMap(Int.init) ?? 1_000
        let connections = environment["HERALD_APNS_BENCH_CONNECTIONS"].flatMap(Int.init) ?? 1
        let signer = try ProviderTokenSigner(
            teamID: TestCredentials.teamID,
            keyID: TestCredentials.keyID,
            pemKey: TestCredentials.providerKeyPEM
        )
        let cache = ProviderTokenCache(signer: signer, now: { Int64(Date().timeIntervalSince1970) })
        var configuration = APNSClientConfiguration(
            endpoint: .init(host: "127.0.0.1", port: Self.port!),
            authentication: .token(cache),
            additionalTrustRootsPEM: [TestCredentials.caCertificatePEM],
            connections: connections
        )
        configuration.maximumQueuedRequests = concurrency * 2
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = APNSClient(configuration: configuration, eventLoopGroup: group, logger: Logger(label: "bench"))
        let request = makeRequest(token: String(repeating: "ab", count: 32))
        // Warm up: connect and let the server raise its stream limit.
        _ = try await client.send(request)

        let start = ContinuousClock.now
        let succeeded = try await withThrowingTaskGroup(of: Int.self) { tasks in
            for worker in 0..<concurrency {
                let share = total / concurrency + (worker < total % concurrency ? 1 : 0)
                tasks.addTask {
                    var ok = 0
                    for _ in 0..<share where try await client.send(request).status == 200 { ok += 1 }
                    return ok
                }
            }
            return try await tasks.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "APNSClient benchmark: \(total) requests, \(concurrency) in flight, \(connections) connection(s):",
            "\(String(format: "%.3f", seconds)) s, \(Int(Double(total) / seconds)) requests/s"
        )
        #expect(succeeded == total)
        await client.shutdown()
        try await group.shutdownGracefully()
    }
}
