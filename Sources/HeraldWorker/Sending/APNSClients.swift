import APNSCore
import AsyncHTTPClient
import FCMCore
import Foundation
import HeraldCore
import Logging
import NIOCore
import PushTransport
import Synchronization

/// One `APNSClient` per app and environment it serves, built from the apps file at start-up so that a bad key or
/// CA fails fast. A client connects when it first sends, so an environment without devices costs nothing.
///
/// The apps can be replaced while the worker runs (`reload`, on SIGHUP): new work leases the new clients, and the
/// clients replaced are shut down once the last lease taken on them is released, so nothing in flight is dropped.
public final class APNSClients: Sendable {
    private let state: Mutex<State>
    /// Replaced clients whose leases are all released, for `APNSClientsService` to shut down.
    private let retired: AsyncStream<[AppClients]>.Continuation
    let retirements: AsyncStream<[AppClients]>
    private let connectionsPerApp: Int
    private let requestTimeout: Duration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let clock: HeraldClock
    /// Mints FCM access tokens at each service account's `token_uri`.
    private let tokenClient: HTTPClient

    /// The apps and their clients, one generation per load of the apps file, and the leases held on each.
    private struct State {
        var apps: AppsFile
        var clients: [String: AppClients]
        var generation = 0
        var leases: [Int: Int] = [:]
        var replaced: [Int: [AppClients]] = [:]
        var shutDown = false
    }

    /// An app's configuration and clients, held by one delivery until it calls `release(_:)`.
    struct Lease: Sendable {
        let app: AppConfiguration
        let clients: AppClients
        fileprivate let generation: Int
    }

    /// One app's clients: one per environment it serves, and FCM's when the app has FCM credentials.
    struct AppClients: Sendable {
        let byEnvironment: [AppConfiguration.Environment: APNSClient]
        /// The client of the app's default environment (`AppConfiguration.environment`); nil for an app without
        /// APNs credentials (FCM or Web Push only).
        let standard: APNSClient?
        /// The app's FCM client, for its Android devices.
        var fcm: FCMTransport? = nil
        /// The app's Web Push clients (one per push service origin), for its browser subscriptions.
        var webpush: WebPushTransports? = nil

        /// The client for `environment`; the default environment's for one the app does not serve (which
        /// `AppConfiguration.environment(ofDevice:)` never names).
        func client(for environment: AppConfiguration.Environment) -> APNSClient? {
            byEnvironment[environment] ?? standard
        }

        /// Shuts each environment's client down, and FCM's.
        func shutdown() async {
            for client in byEnvironment.values { await client.shutdown() }
            await fcm?.client.shutdown()
            await webpush?.shutdown()
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
        environment: [String: String] = ProcessInfo.processInfo.environment,
        clock: HeraldClock = .system
    ) throws(ConfigurationError) {
        self.connectionsPerApp = connectionsPerApp
        self.requestTimeout = requestTimeout
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.clock = clock
        let tokenClient = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup))
        self.tokenClient = tokenClient
        let clients: [String: AppClients]
        do {
            clients = try Self.build(
                apps, directory: directory, connectionsPerApp: connectionsPerApp, requestTimeout: requestTimeout,
                eventLoopGroup: eventLoopGroup, logger: logger, environment: environment, tokenClient: tokenClient,
                clock: clock)
        } catch {
            try? tokenClient.syncShutdown()
            throw error
        }
        state = Mutex(State(apps: apps, clients: clients))
        (retirements, retired) = AsyncStream.makeStream()
    }

    /// Builds every app's clients, or fails naming the first app that cannot have one (nothing is kept then).
    private static func build(
        _ apps: AppsFile, directory: String, connectionsPerApp: Int, requestTimeout: Duration,
        eventLoopGroup: any EventLoopGroup, logger: Logger, environment: [String: String], tokenClient: HTTPClient,
        clock: HeraldClock
    ) throws(ConfigurationError) -> [String: AppClients] {
        var clients: [String: AppClients] = [:]
        for app in apps.apps {
            let roots = try app.trustRootsPEM(directory: directory)
            // Each environment's credentials: `auth`, or the environment's `auth_by_environment` entry (Apple's
            // environment-scoped keys); a token key's cache is the process's one for that key.
            var byEnvironment: [AppConfiguration.Environment: APNSClient] = [:]
            // An app without `auth` has no APNs client: its iOS devices, if any, fail with NoAPNsCredentials.
            for served in app.servedEnvironments where app.auth != nil {
                let (host, port) = try app.resolvedEndpoint(for: served)
                let configuration = APNSClientConfiguration(
                    endpoint: .init(host: host, port: port),
                    authentication: try Self.authentication(
                        of: app, in: served, directory: directory, environment: environment),
                    additionalTrustRootsPEM: roots,
                    connections: connectionsPerApp,
                    requestTimeout: requestTimeout
                )
                var appLogger = logger
                appLogger[metadataKey: "app"] = "\(app.id)"
                if app.sendsPerDeviceEnvironment { appLogger[metadataKey: "environment"] = "\(served.rawValue)" }
                byEnvironment[served] = APNSClient(
                    configuration: configuration, eventLoopGroup: eventLoopGroup, logger: appLogger)
            }
            // `servedEnvironments` always includes `environment` (`AppsFile.parse`).
            let standard = byEnvironment[app.environment]
            guard standard != nil || app.auth == nil else {
                throw ConfigurationError("app \(app.id): environments must include environment")
            }
            var appClients = AppClients(byEnvironment: byEnvironment, standard: standard)
            appClients.fcm = try fcmTransport(
                of: app, directory: directory, requestTimeout: requestTimeout, eventLoopGroup: eventLoopGroup,
                logger: logger, tokenClient: tokenClient, clock: clock)
            appClients.webpush = try webPushTransports(
                of: app, directory: directory, requestTimeout: requestTimeout, eventLoopGroup: eventLoopGroup,
                logger: logger, clock: clock)
            clients[app.id] = appClients
        }
        return clients
    }

    /// The Web Push clients of an app with a `webpush` block: its VAPID key read and checked now (a bad key fails
    /// the start or the reload), its tokens one cache per app.
    private static func webPushTransports(
        of app: AppConfiguration, directory: String, requestTimeout: Duration, eventLoopGroup: any EventLoopGroup,
        logger: Logger, clock: HeraldClock
    ) throws(ConfigurationError) -> WebPushTransports? {
        guard let settings = app.webpush, let key = try app.vapidKey(directory: directory) else { return nil }
        guard let subject = settings.vapidSubject else {
            throw ConfigurationError("app \(app.id): webpush.subject is not a mailto: or https: URI")
        }
        var appLogger = logger
        appLogger[metadataKey: "app"] = "\(app.id)"
        appLogger[metadataKey: "provider"] = "webpush"
        return WebPushTransports(
            key: key, subject: subject, settings: settings,
            trustRootsPEM: try app.webPushTrustRootsPEM(directory: directory), requestTimeout: requestTimeout,
            eventLoopGroup: eventLoopGroup, logger: appLogger, clock: clock)
    }

    /// The FCM client of an app with FCM credentials: its service account read and checked now (a bad key fails
    /// the start or the reload), its access tokens the process's one cache for the account.
    private static func fcmTransport(
        of app: AppConfiguration, directory: String, requestTimeout: Duration, eventLoopGroup: any EventLoopGroup,
        logger: Logger, tokenClient: HTTPClient, clock: HeraldClock
    ) throws(ConfigurationError) -> FCMTransport? {
        guard let fcm = app.fcm, let text = try app.fcmServiceAccount(directory: directory) else { return nil }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: Array(text.utf8))
        } catch {
            throw ConfigurationError("app \(app.id): fcm.service_account_file: \(error)")
        }
        let roots = try app.fcmTrustRootsPEM(directory: directory)
        let cache = try FCMAccessTokenSource.cache(
            for: account, client: tokenClient, trustRootsPEM: roots, clock: clock)
        let (host, port) = fcm.hostAndPort
        var configuration = FCMClientConfiguration(
            endpoint: HTTP2Endpoint(host: host, port: port), projectID: account.projectID,
            additionalTrustRootsPEM: roots)
        configuration.requestTimeout = requestTimeout
        var appLogger = logger
        appLogger[metadataKey: "app"] = "\(app.id)"
        appLogger[metadataKey: "provider"] = "fcm"
        let client = FCMClient(
            configuration: configuration, tokens: FCMAccessTokenSource(cache: cache), eventLoopGroup: eventLoopGroup,
            logger: appLogger)
        return FCMTransport(client: client, clock: clock)
    }

    /// The credentials of `app` in `served` (`AppConfiguration.auth(for:)`): a token key's cache (the process's one
    /// for the key), or the certificate and key of a `.p12` whose passphrase comes from the variable it names.
    private static func authentication(
        of app: AppConfiguration, in served: AppConfiguration.Environment, directory: String,
        environment: [String: String]
    ) throws(ConfigurationError) -> APNSClientConfiguration.Authentication {
        switch app.auth(for: served) {
        case .token:
            guard let cache = try app.providerTokens(directory: directory, environment: served) else {
                throw ConfigurationError("app \(app.id): no token key for \(served.rawValue)")
            }
            return .token(cache)
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
                return try .certificate(p12Path: path, passphrase: passphrase)
            } catch {
                throw ConfigurationError("app \(app.id): cannot open p12_file at \(path) (wrong passphrase?)")
            }
        case nil:
            throw ConfigurationError("app \(app.id): no APNs credentials (auth)")
        }
    }

    /// The apps file in use (the last one loaded).
    public var apps: AppsFile { state.withLock { $0.apps } }

    /// `app`'s configuration and clients, if the app is configured; `release(_:)` must follow.
    func lease(_ app: String) -> Lease? {
        state.withLock { state in
            guard let clients = state.clients[app], let configuration = state.apps.app(app) else { return nil }
            state.leases[state.generation, default: 0] += 1
            return Lease(app: configuration, clients: clients, generation: state.generation)
        }
    }

    /// Ends a lease; the last lease on replaced clients hands them over to be shut down.
    func release(_ lease: Lease) { release(generation: lease.generation) }

    private func release(generation: Int) {
        let done: [AppClients]? = state.withLock { state in
            state.leases[generation, default: 1] -= 1
            guard state.leases[generation] == 0 else { return nil }
            state.leases[generation] = nil
            return state.replaced.removeValue(forKey: generation)
        }
        if let done { retired.yield(done) }
    }

    /// The client of `app`'s default environment, if the app is configured.
    public func client(for app: String) -> APNSClient? { state.withLock { $0.clients[app]?.standard } }

    /// Replaces the apps: builds every app's clients anew (so a rotated key or certificate is read again), and
    /// retires the previous clients once the work that leased them is done. If any app cannot have a client, the
    /// apps in use are kept and the error names the app.
    public func reload(
        _ apps: AppsFile, directory: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) {
        let clients = try Self.build(
            apps, directory: directory, connectionsPerApp: connectionsPerApp, requestTimeout: requestTimeout,
            eventLoopGroup: eventLoopGroup, logger: logger, environment: environment, tokenClient: tokenClient,
            clock: clock)
        let done: [AppClients]? = state.withLock { state in
            // A worker that is stopping keeps what it has: the new clients never connected, so they hold nothing.
            guard !state.shutDown else { return nil }
            let previous = (generation: state.generation, clients: Array(state.clients.values))
            state.apps = apps
            state.clients = clients
            state.generation += 1
            guard state.leases[previous.generation, default: 0] > 0 else { return previous.clients }
            state.replaced[previous.generation] = previous.clients
            return nil
        }
        if let done { retired.yield(done) }
    }

    /// Shuts every client down, replaced ones still leased included (the pipeline has drained by then).
    public func shutdown() async {
        let all = state.withLock { state in
            state.shutDown = true
            defer {
                state.clients = [:]
                state.replaced = [:]
            }
            return Array(state.clients.values) + state.replaced.values.flatMap { $0 }
        }
        retired.finish()
        for clients in all { await clients.shutdown() }
        try? await tokenClient.shutdown()
    }
}

extension APNSClients: TransportLeasing {
    func leaseTransports(_ app: String) -> TransportLease? {
        guard let lease = lease(app) else { return nil }
        return TransportLease(
            app: lease.app, byEnvironment: lease.clients.byEnvironment, standard: lease.clients.standard,
            fcm: lease.clients.fcm, webpush: lease.clients.webpush, token: lease.generation)
    }

    func release(_ lease: TransportLease) { release(generation: lease.token) }
}
