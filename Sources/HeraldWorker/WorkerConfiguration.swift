import HeraldCore
import HeraldStore
import RabbitMQ

/// Everything a worker needs, already read and checked by the CLI.
public struct WorkerConfiguration: Sendable {
    /// The broker.
    public var amqp: AMQPConfiguration
    /// The database.
    public var database: DatabaseConfiguration
    /// The apps Herald delivers for.
    public var apps: AppsFile
    /// The directory relative key, certificate and CA paths in the apps file are resolved against.
    public var appsDirectory: String
    /// Queue names.
    public var topology: Topology = .init()
    /// Jobs one worker works on at once (AMQP prefetch).
    public var prefetch: UInt16 = 4
    /// Notifications of one job in flight at once.
    public var sendConcurrency: Int = 500
    /// Devices read from PostgreSQL per page.
    public var pageSize: Int = 1000
    /// HTTP/2 connections per app.
    public var connectionsPerApp: Int = 2
    /// How long one APNs request may take before it fails with a timeout.
    public var requestTimeout: Duration = .seconds(10)
    /// Retries of transient failures within one delivery.
    public var retryPolicy: RetryPolicy = .init(maximumAttempts: 3, baseDelay: .milliseconds(100), maximumDelay: .seconds(2))

    /// Called after each job's outcome is written and acknowledged (or the message parked): for embedding
    /// applications and tests that wait for events rather than time.
    public var onJobHandled: (@Sendable (JobEvent) -> Void)? = nil

    public init(amqp: AMQPConfiguration, database: DatabaseConfiguration, apps: AppsFile, appsDirectory: String) {
        self.amqp = amqp
        self.database = database
        self.apps = apps
        self.appsDirectory = appsDirectory
    }
}

/// The queue names Herald uses. The prefix is configurable so that tests and tenants can share a broker.
public struct Topology: Sendable, Hashable {
    /// The prefix, `herald` by default.
    public var prefix: String

    public init(prefix: String = "herald") { self.prefix = prefix }

    /// Where producers publish jobs (through the default exchange, routing key = queue name).
    public var jobs: String { prefix + ".jobs" }
    /// Where messages that can never succeed go, with `x-herald-reason`.
    public var parked: String { prefix + ".parked" }

    /// Declares the queues, idempotently.
    public func declare(on connection: AMQPConnection) async throws {
        _ = try await connection.declareQueue(jobs, durable: true)
        _ = try await connection.declareQueue(parked, durable: true)
    }
}

/// Header names on parked messages.
public enum ParkingHeader {
    public static let reason = "x-herald-reason"
    public static let attempts = "x-herald-attempts"
    public static let originQueue = "x-herald-origin-queue"
}

/// What happened to one job message.
public enum JobEvent: Sendable, Hashable {
    /// Delivered (or stopped by APNs) and written back; the job id and its final state.
    case finished(id: String, state: JobState)
    /// The id was already final: acknowledged without sending.
    case duplicate(id: String, state: JobState)
    /// Parked with a reason; the job id if the message was a job at all.
    case parked(id: String?, reason: String)
}
