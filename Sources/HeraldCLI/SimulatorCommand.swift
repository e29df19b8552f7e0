import APNSCore
import APNSSimulator
import ArgumentParser
import Foundation
import HeraldCommandLine
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// `herald apns-sim`: run the APNs simulator until SIGTERM/SIGINT, then print its summary.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sim",
        abstract: "Run an HTTP/2 server that answers as APNs does (for tests, demos and benchmarks)."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0 picks a free one).") var port = 2197
    @Option(help: "Server certificate chain (PEM).") var certificate: String
    @Option(help: "Server private key (PEM).") var privateKey: String
    @Option(help: "A provider key the simulator accepts: KEY_ID:TEAM_ID:path-to-.p8-or-public-PEM (repeatable).")
    var providerKey: [String] = []
    @Option(help: "Tokens starting with this hex prefix answer 410 Unregistered (repeatable).")
    var deadTokenPrefix: [String] = []
    @Option(help: "Tokens starting with this hex prefix answer 400 BadDeviceToken (repeatable).")
    var badTokenPrefix: [String] = []
    @Option(help: "Append accepted notifications as JSON lines to this file.") var recordFile: String?
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS to advertise.") var maxConcurrentStreams = 1000
    @Option(help: "Require a client certificate signed by this CA (PEM) and accept requests without a JWT (mTLS).")
    var clientCa: String?

    func run() async throws {
        // Not `ServiceOptions().makeLogger`: a parsable type built without parsing traps when its options are read.
        LogSetup.bootstrapOnce(level: Environment.get("HERALD_LOG_LEVEL"))
        let logger = Logger(label: "herald.apns-sim")
        var keys: [String: APNSSimulatorConfiguration.ProviderKey] = [:]
        for entry in providerKey {
            let parts = entry.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { throw ValidationError("--provider-key must be KEY_ID:TEAM_ID:path") }
            keys[parts[0]] = APNSSimulatorConfiguration.ProviderKey(
                teamID: parts[1], publicKeyPEM: try publicKeyPEM(atPath: parts[2]))
        }
        var configuration = APNSSimulatorConfiguration(
            certificateChainPEM: try read(certificate),
            privateKeyPEM: try read(privateKey),
            providerKeys: keys
        )
        configuration.host = host
        configuration.port = port
        configuration.deadTokenPrefixes = deadTokenPrefix
        configuration.badTokenPrefixes = badTokenPrefix
        configuration.recordFile = recordFile
        configuration.maxConcurrentStreams = maxConcurrentStreams
        if let clientCa { configuration.clientCertificateTrustRootsPEM = [try read(clientCa)] }
        let simulator = APNSSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let bound: Int
        do {
            bound = try await simulator.start()
        } catch {
            throw AddressInUse.explain(error, what: "the APNs simulator", host: host, port: port, setting: "--port")
        }
        print("apns-sim listening on https://\(host):\(bound)")
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        for await _ in signals { break }
        try await simulator.stop()
        print(simulator.summary())
    }
}
