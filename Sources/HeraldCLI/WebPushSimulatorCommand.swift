import ArgumentParser
import Foundation
import HeraldCommandLine
import Logging
import NIOPosix
import UnixSignals
import WebPushSimulator

/// `herald webpush-sim`: run the Web Push simulator (RFC 8030 push endpoints that decrypt and verify VAPID) until
/// SIGTERM/SIGINT, then print its summary.
struct WebPushSimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush-sim",
        abstract:
            "Run an HTTP/2 server that answers as a Web Push service does and decrypts what it gets (tests, demos)."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "The host endpoints name (default: --host); it must be in the server certificate.")
    var endpointHost: String?
    @Option(help: "Port (0 picks a free one).") var port = 2199
    @Option(help: "Server certificate chain (PEM).") var certificate: String
    @Option(help: "Server private key (PEM).") var privateKey: String
    @Option(help: "A VAPID public key (base64url) the service accepts as k (repeatable; none accepts any).")
    var vapidPublicKey: [String] = []
    @Option(help: "Make this many subscriptions at start (their keys stay in this process).") var subscriptions = 0
    @Option(help: "Write the subscriptions as JSON lines ({endpoint, expirationTime, keys: {p256dh, auth}}) here.")
    var subscriptionsOut: String?
    @Option(help: "The applicationServerKey (base64url) the subscriptions are made with; k must then match it.")
    var applicationServerKey: String?
    @Option(help: "Subscription ids starting with this prefix answer 410 Unregistered (repeatable).")
    var goneIdPrefix: [String] = []
    @Option(help: "Subscription ids starting with this prefix answer 404 (repeatable).")
    var unknownIdPrefix: [String] = []
    @Option(
        help: """
            Subscription ids starting with this prefix are accepted without keys: headers and VAPID are checked, the \
            body is not decrypted (repeatable; for benchmarks with many synthetic subscriptions).
            """)
    var acceptAnyKeysPrefix: [String] = []
    @Option(
        help: """
            An injected failure as JSON, e.g. {"status":429,"every":10,"retryAfter":5,"idPrefix":"x"} \
            (status 404, 410, 413, 429, 500, 502 or 503; repeatable).
            """)
    var injectFailure: [String] = []
    @Option(help: "Close the TCP connection, without GOAWAY, when a request arrives after this many.")
    var dropConnectionAfter: Int?
    @Option(help: "Delay every answer by this many milliseconds.") var responseDelayMs: Int?
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS to advertise.") var maxConcurrentStreams = 100
    @Option(help: "Append accepted messages (id, plaintext, ttl, urgency, topic) as JSON lines to this file.")
    var recordFile: String?

    func run() async throws {
        LogSetup.bootstrapOnce(level: Environment.get("HERALD_LOG_LEVEL"))
        let logger = Logger(label: "herald.webpush-sim")
        var configuration = WebPushSimulatorConfiguration(
            certificateChainPEM: try read(certificate), privateKeyPEM: try read(privateKey), host: host, port: port)
        configuration.endpointHost = endpointHost
        configuration.vapidPublicKeys = vapidPublicKey
        configuration.goneIDPrefixes = goneIdPrefix
        configuration.unknownIDPrefixes = unknownIdPrefix
        configuration.acceptAnyKeysForPrefixes = acceptAnyKeysPrefix
        configuration.injectedFailures = try injectFailure.map { json in
            do {
                return try JSONDecoder().decode(WebPushInjectedFailure.self, from: Data(json.utf8))
            } catch {
                throw ValidationError("--inject-failure \(json): \(error)")
            }
        }
        configuration.dropConnectionAfterRequests = dropConnectionAfter
        configuration.responseDelay = responseDelayMs.map { .milliseconds($0) }
        configuration.maxConcurrentStreams = maxConcurrentStreams
        configuration.recordFile = recordFile
        let simulator = WebPushSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        do {
            _ = try await simulator.start()
        } catch {
            throw AddressInUse.explain(error, what: "the Web Push simulator", host: host, port: port, setting: "--port")
        }
        let made = (0..<subscriptions).map { _ in
            simulator.makeSubscription(applicationServerKey: applicationServerKey)
        }
        if let subscriptionsOut {
            let lines = made.map { $0.json + "\n" }.joined()
            try Data(lines.utf8).write(to: URL(fileURLWithPath: subscriptionsOut))
        }
        print("webpush-sim listening on \(simulator.origin) (\(made.count) subscriptions)")
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        for await _ in signals { break }
        try await simulator.stop()
        print(simulator.summary())
    }
}
