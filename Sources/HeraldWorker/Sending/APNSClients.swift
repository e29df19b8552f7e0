import APNSCore
import APNSTransport
import Foundation
import HeraldCore
import Logging
import NIOCore

/// One `APNSClient` per app and environment it serves, built from the apps file at start-up so that a bad key or
/// CA fails fast. A client connects when it first sends, so an environment without devices costs nothing.
public final class APNSClients: Sendable {
    private let clients: [String: AppClients]

    /// One app's clients: one per environment it serves.
    struct AppClients: Sendable {
        let byEnvironment: [AppConfiguration.Environment: APNSClient]
        /// The client of the app's default environment (`AppConfiguration.environment`).
        let standard: APNSClient

        /// The client for `environment`; the default environment's for one the app does not serve (which
        /// `AppConfiguration.environment(ofDevice:)` never names).
        func client(for environment: AppConfiguration.Environment) -> APNSClient {
            byEnvironment[environment] ?? standard
        }
    }

    /// Builds a client for every app. Relative paths are resolved against `directory`; a certificate app's
    /// passphrase is read from `environment` under the name its `passphrase_env` gives.
    public init(
        apps: AppsFile,
        directory: String,
        connectionsPerApp: Int,
        requestTimeout: Duration,
        eventLoopGroup: any EventLoopGroup,
        logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) {
        var clients: [String: AppClients] = [:]
        for app in apps.apps {
            let authentication: APNSClientConfiguration.Authentication
            switch app.auth {
            case .token:
                guard let cache = try app.providerTokens(directory: directory) else { continue }
                authentication = .token(cache)
            case .certificate(let p12File, let passphraseEnv):
                let path = p12File.hasPrefix("/") ? p12File : directory + "/" + p12File
                // The passphrase comes from the environment variable the apps file names; it is never logged.
                var passphrase = ""
                if let passphraseEnv {
                    guard let value = environment[passphraseEnv] else {
                        throw ConfigurationError("app \(app.id): passphrase_env \(passphraseEnv) is not set")
                    }
                    passphrase = value
                }
                do {
                    authentication = try .certificate(p12Path: path, passphrase: passphrase)
                } catch {
                    throw ConfigurationError("app \(app.id): cannot open p12_file at \(path) (wrong passphrase?)")
                }
            }
            let roots = try app.trustRootsPEM(directory: directory)
            // The same credentials for each environment: a token key signs for both, and a certificate is the
            // operator's to match to the environments listed.
            var byEnvironment: [AppConfiguration.Environment: APNSClient] = [:]
            for environment in app.servedEnvironments {
                let (host, port) = try app.resolvedEndpoint(for: environment)
                let configuration = APNSClientConfiguration(
                    endpoint: .init(host: host, port: port),
                    authentication: authentication,
                    additionalTrustRootsPEM: roots,
                    connections: connectionsPerApp,
                    requestTimeout: requestTimeout
                )
                var appLogger = logger
                appLogger[metadataKey: "app"] = "\(app.id)"
                if app.sendsPerDeviceEnvironment { appLogger[metadataKey: "environment"] = "\(environment.rawValue)" }
                byEnvironment[environment] = APNSClient(
                    configuration: configuration, eventLoopGroup: eventLoopGroup, logger: appLogger)
            }
            // `servedEnvironments` always includes `environment` (`AppsFile.parse`).
            guard let standard = byEnvironment[app.environment] else {
                throw ConfigurationError("app \(app.id): environments must include environment")
            }
            clients[app.id] = AppClients(byEnvironment: byEnvironment, standard: standard)
        }
        self.clients = clients
    }

    /// The clients of `app`, if the app is configured.
    func clients(for app: String) -> AppClients? { clients[app] }

    /// The client of `app`'s default environment, if the app is configured.
    public func client(for app: String) -> APNSClient? { clients[app]?.standard }

    /// Shuts every client down.
    public func shutdown() async {
        for app in clients.values {
            for client in app.byEnvironment.values { await client.shutdown() }
        }
    }
}
