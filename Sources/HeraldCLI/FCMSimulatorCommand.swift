import ArgumentParser
import FCMCore
import FCMSimulator
import Foundation
import HeraldCommandLine
import Logging
import NIOPosix
import UnixSignals

/// `herald fcm-sim`: run the FCM simulator (the OAuth token endpoint and `messages:send`) until SIGTERM/SIGINT,
/// then print its summary.
struct FCMSimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-sim",
        abstract: "Run an HTTP/2 server that answers as FCM HTTP v1 and Google's token endpoint do (tests, demos)."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0 picks a free one).") var port = 2198
    @Option(help: "Server certificate chain (PEM).") var certificate: String
    @Option(help: "Server private key (PEM).") var privateKey: String
    @Option(
        help: """
            A service account the token endpoint accepts: the key file the app's fcm.service_account_file names \
            (repeatable). Its token_uri must be this simulator's https://HOST:PORT/token.
            """)
    var serviceAccount: [String] = []
    @Option(help: "Tokens starting with this prefix answer 404 UNREGISTERED (repeatable).")
    var deadTokenPrefix: [String] = []
    @Option(help: "Tokens starting with this prefix answer 403 SENDER_ID_MISMATCH (repeatable).")
    var foreignTokenPrefix: [String] = []
    @Option(help: "Append accepted messages as JSON lines to this file.") var recordFile: String?

    func run() async throws {
        LogSetup.bootstrapOnce(level: Environment.get("HERALD_LOG_LEVEL"))
        let logger = Logger(label: "herald.fcm-sim")
        var accounts: [String: FCMSimulatorConfiguration.ServiceAccount] = [:]
        for path in serviceAccount {
            let account: FCMServiceAccount
            do {
                account = try FCMServiceAccount(json: Array(try read(path).utf8))
            } catch {
                throw ValidationError("--service-account \(path): \(error)")
            }
            accounts[account.clientEmail] = .init(
                publicKeyPEM: account.publicKeyPEM, projectID: account.projectID, keyID: account.privateKeyID)
        }
        var configuration = FCMSimulatorConfiguration(
            certificateChainPEM: try read(certificate), privateKeyPEM: try read(privateKey),
            serviceAccounts: accounts, host: host, port: port)
        configuration.deadTokenPrefixes = deadTokenPrefix
        configuration.foreignTokenPrefixes = foreignTokenPrefix
        configuration.recordFile = recordFile
        let simulator = FCMSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let bound: Int
        do {
            bound = try await simulator.start()
        } catch {
            throw AddressInUse.explain(error, what: "the FCM simulator", host: host, port: port, setting: "--port")
        }
        print("fcm-sim listening on https://\(host):\(bound) (token endpoint \(simulator.tokenAudience))")
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        for await _ in signals { break }
        try await simulator.stop()
        print(simulator.summary())
    }
}
