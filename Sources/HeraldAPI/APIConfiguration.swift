import HeraldCore
import HeraldMessaging
import HeraldStore
import Prometheus
import RabbitMQ

/// Everything `herald api` needs, already read and checked by the CLI.
public struct APIConfiguration: Sendable {
    /// Address to bind, e.g. `0.0.0.0` in a container.
    public var host: String = "127.0.0.1"
    /// Port; 0 picks a free one.
    public var port: Int = 8080
    /// The broker jobs are published to.
    public var amqp: AMQPConfiguration
    /// The database of devices, jobs, keys and reports.
    public var database: DatabaseConfiguration
    /// Queue names (the prefix must match the workers'); declared idempotently on connect.
    public var topology: Topology = .init()
    /// The largest request body accepted, in bytes (a job listing 10,000 tokens is about 700 KB).
    public var maximumBodySize: Int = 1 << 20
    /// How long a client connection may stay open with no request in progress before it is closed: an idle or
    /// abandoned connection does not hold a file descriptor for ever.
    public var idleTimeout: Duration = .seconds(60)
    /// Rows a dead-token report lists at most (its totals always cover the whole window).
    public var maximumReportRows: Int = 10_000
    /// The registry `/metrics` exposes: the one the process bootstrapped swift-metrics with.
    public var metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    /// The apps file, for the routes that talk to Apple on an app's behalf (broadcast channels); nil leaves those
    /// routes answering 503.
    public var apps: AppsFile? = nil
    /// The directory the apps file's relative paths (key files, CA files) are resolved against.
    public var appsDirectory: String = "."
    /// Each app's identity-token policy (`identity` in the apps file), by app id. An app not listed requires
    /// identity tokens and has no secret: a register-only key binds no device to a user or an activity.
    public var identities: [String: AppIdentity] = [:]
    /// The rate of a register-only key that has none of its own, in requests a second in each API process.
    public var registerRequestsPerSecond: Int = 100
    /// New devices a register-only key may register per hour (every API process together), unless the key has a
    /// quota of its own.
    public var registerDevicesPerHour: Int = 10_000
    /// Live Activity update tokens a register-only key may register per device, unless the key has a quota of its
    /// own.
    public var activityTokensPerDevice: Int = 20
    /// How long after its insert a job still awaiting its publish is taken over by a repeat of its request (same
    /// Idempotency-Key and body): the request that recorded it died before publishing it. Until then the repeat
    /// answers that the job exists and leaves the publish to that request.
    public var unpublishedJobGrace: Duration = .seconds(10)
    /// Time for the routes: report windows, identity tokens' expiry, channels' end dates, key rates.
    public var clock: HeraldClock = .system

    public init(amqp: AMQPConfiguration, database: DatabaseConfiguration) {
        self.amqp = amqp
        self.database = database
    }
}
