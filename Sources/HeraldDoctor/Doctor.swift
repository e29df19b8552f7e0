import Foundation
import HeraldCore
import HeraldMessaging
import Logging
import NIOCore
import NIOPosix

/// `herald doctor`: checks, before the first real send, that a deployment is right — the broker (login, vhost,
/// topology), the database (reachable, migrations current) and every app of the apps file (credentials, endpoint)
/// — and reports one finding per check.
///
/// It only looks: it never declares a queue, applies a migration or sends a notification.
public struct Doctor: Sendable {
    /// What the checks need: the same inputs the worker takes. A setting that is missing is reported as its check's
    /// failure, naming its flag and environment variable, so one run reports everything that is missing at once.
    public struct Deployment: Sendable {
        /// `--amqp-url` / `HERALD_AMQP_URL`, or why the command has none.
        public var amqpURL: Result<String, Unresolved>
        /// `--database-url` / `HERALD_DATABASE_URL`, or why the command has none.
        public var databaseURL: Result<String, Unresolved>
        /// `--apps-file` / `HERALD_APPS_FILE`.
        public var appsFile: String?
        /// `--schemas` / `HERALD_SCHEMAS_DIR`.
        public var schemasDirectory: String
        /// The queues the workers declare (`--queue-prefix`, `--queue-type`).
        public var topology: Topology
        /// Where certificate apps' passphrases are read (`passphrase_env`).
        public var environment: [String: String]
        /// The longest one network check may take (connect, handshake, answer).
        public var timeout: Duration
        /// A certificate that expires sooner than this is a warning.
        public var expiryWarning: Duration
        /// The current time, for certificate validity and provider tokens.
        public var now: @Sendable () -> Date

        public init(
            amqpURL: Result<String, Unresolved>,
            databaseURL: Result<String, Unresolved>,
            appsFile: String?,
            schemasDirectory: String,
            topology: Topology = Topology(),
            environment: [String: String] = ProcessInfo.processInfo.environment,
            timeout: Duration = .seconds(10),
            expiryWarning: Duration = .seconds(30 * 24 * 3600),
            now: @escaping @Sendable () -> Date = { HeraldClock.system.date }
        ) {
            self.amqpURL = amqpURL
            self.databaseURL = databaseURL
            self.appsFile = appsFile
            self.schemasDirectory = schemasDirectory
            self.topology = topology
            self.environment = environment
            self.timeout = timeout
            self.expiryWarning = expiryWarning
            self.now = now
        }
    }

    /// A setting the command could not resolve (not given, or its configuration source is wrong): its sentence,
    /// which the check reports as its failure.
    public struct Unresolved: Error, Sendable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    let deployment: Deployment
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    public init(
        deployment: Deployment,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.deployment = deployment
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Runs every check, the three parts side by side, and returns the findings in a fixed order: broker, database,
    /// apps.
    public func run() async -> DoctorReport {
        async let broker = checkBroker()
        async let database = checkDatabase()
        async let apps = checkApps()
        return DoctorReport(findings: await broker + database + apps)
    }
}
