import HeraldCore
import HeraldMessaging
import HeraldStore
import Prometheus
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
    /// The apps file's path, read again on SIGHUP (`AppsReloader`); nil: the apps are not reloaded.
    public var appsFile: String? = nil
    /// Queue names.
    public var topology: Topology = .init()
    /// Time and chance for every stage (waits, backoffs and their jitter, expiry checks, paced sends): the machine's
    /// clocks, or a `MockClock` in tests.
    public var clock: HeraldClock = .system
    /// The store's metrics (`herald_jobs_finished_total`); the default goes to the process's `MetricsSystem`. Tests
    /// give their own factory to read them.
    public var storeMetrics = StoreMetrics()
    /// Job messages one worker plans at once (AMQP prefetch on the jobs queue). Small jobs are delivered by the
    /// planner itself and mostly wait on round trips, so many are in hand at once: groups of up to a quarter of this
    /// share their database statements, and at 1,024 (groups of about 100) a job costs PostgreSQL and the worker about
    /// a quarter less CPU than at 256.
    public var prefetch: UInt16 = 1024
    /// Batches one worker delivers at once (AMQP prefetch on the batches queue).
    public var batchPrefetch: UInt16 = 4
    /// Small jobs delivered together in one group (one transaction, one write per job); nil takes a quarter of
    /// `prefetch`.
    public var smallJobGroupSize: Int? = nil
    /// Devices per batch: the unit that workers share, that is retried, and that a crash can duplicate. Each batch
    /// costs a fixed amount of work (its message, its statements, its write-back) whatever its size: 5,000 keeps
    /// that small beside the sending (decision 0012).
    public var batchSize: Int = 5000
    /// Deliveries of one batch in all (the first, then one per retry queue) before its devices are parked.
    public var maximumBatchAttempts: Int = 5
    /// Tries of one event at an app's webhook (the first, then one per retry queue) before it is parked.
    public var webhookAttempts: Int = 5
    /// How long one webhook request may take, connection included.
    public var webhookTimeout: Duration = .seconds(10)
    /// Webhook events one worker holds at once besides its apps' lanes: the webhooks queue's AMQP prefetch is this
    /// plus `webhookConcurrencyPerApp` for each app with a webhook, so that slow endpoints holding their lanes full
    /// still leave this many for the other apps' events.
    public var webhookConcurrency: UInt16 = 16
    /// Webhook requests one worker has in flight for one app at once; an event of an app with this many waits in a
    /// delay queue (no attempt counted), so one slow endpoint never holds another app's events.
    public var webhookConcurrencyPerApp: Int = 8
    /// Failures in a row (an answer other than 2xx, a timeout, a refused connection) after which an endpoint's
    /// circuit breaker opens: its events then count a failed attempt without a request.
    public var webhookBreakerThreshold: Int = 5
    /// How long an open breaker lets no request through before one probe is tried.
    public var webhookBreakerOpenFor: Duration = .seconds(30)
    /// How long a job the API recorded may wait for the API's publish before the scheduler publishes it itself (an
    /// API that died between its insert and its publish); longer than any publish of the API takes.
    public var unpublishedJobGrace: Duration = .seconds(60)
    /// How often the scheduler looks for due jobs.
    public var schedulerInterval: Duration = .seconds(1)
    /// How often the scheduler looks for paused planning to resume (`planAhead`).
    public var planningResumeInterval: Duration = .milliseconds(200)
    /// How long a redelivered job message waits for the planning claim of its job when it is held (its planner may
    /// have died a moment ago, before PostgreSQL noticed, or may yet fail): past this, that planner is taken to be
    /// alive and the message is acknowledged as a copy. Above the ~25 s in which PostgreSQL drops a vanished session.
    public var planningClaimWait: Duration = .seconds(60)
    /// How long a finished job id is remembered for idempotency: retention removes finished jobs' rows past it.
    /// Seven days is what the docs promise; nil keeps them for ever.
    public var idempotencyRetention: Duration? = .seconds(7 * 24 * 3600)
    /// How long `dead_tokens` rows are kept (the cleanup report, `herald devices restore`); nil: for ever.
    public var deadTokenRetention: Duration? = .seconds(90 * 24 * 3600)
    /// How long `delivery_failures` rows are kept; nil: for ever.
    public var deliveryFailureRetention: Duration? = .seconds(30 * 24 * 3600)
    /// How long a message stays in the parking queue (by its parking time); nil: for ever.
    public var parkedRetention: Duration? = .seconds(14 * 24 * 3600)
    /// How often a worker tries to run retention (one worker at a time runs it, under an advisory lock).
    public var retentionInterval: Duration = .seconds(300)
    /// How far ahead a throttled job's batch may take its turn in the job's rate: a batch whose turn is further off
    /// goes back to a delay queue rather than wait in the worker, and a throttled job's batches hold about this
    /// much of its rate, so that no batch holds a worker for much longer than twice this.
    public var throttleWindow: Duration = .seconds(2)
    /// Batches of an unthrottled job planned before its planning pauses until fewer than this many are pending (the
    /// scheduler then resumes it, checking every `planningResumeInterval`): the batches queue then holds at most
    /// about twice this of any job, and a later job's batches, another app's among them, wait behind that rather
    /// than behind a whole broadcast. The fleet must not deliver a window faster than the scheduler looks (about
    /// 100 batches a second per worker at full speed): raise it for a large fleet. nil plans a job whole. A
    /// throttled job is always paced, at about 30 s of its rate.
    public var planAhead: Int? = 100
    /// Notifications of one job in flight at once.
    public var sendConcurrency: Int = 500
    /// HTTP/2 connections per app.
    public var connectionsPerApp: Int = 2
    /// How long one APNs request may take before it fails with a timeout.
    public var requestTimeout: Duration = .seconds(10)
    /// When a database statement that outlived an outage is given up on (and its work held and tried again).
    public var databaseStalls = StallPolicy()
    /// The largest message body a worker reads; a larger job or batch message is parked unread.
    public var maximumMessageBytes: Int = 1 << 20
    /// Deliveries of one message the broker may count (`x-delivery-count`, quorum queues) before the worker parks
    /// it instead of handling it again: each ended unsettled, so the worker holding it stopped or died. Below the
    /// queues' own `x-delivery-limit`, so the worker parks it (with the reason) before the broker dead-letters it.
    public var maximumDeliveries: Int = 10
    /// Brief in-process retries of transient failures before a batch's failures go to the retry queues.
    public var retryPolicy: RetryPolicy = .init(
        maximumAttempts: 2, baseDelay: .milliseconds(100), maximumDelay: .seconds(1))
    /// Groups of small jobs one worker delivers at once, each in its own transaction (`SmallJobQueue`).
    public var smallJobRunners: Int = 4
    /// Devices of a batch whose outcomes are committed together, before the next slice is sent: a worker that dies
    /// re-sends at most one slice of each batch it held (`batchPrefetch` of them), not whole batches: 4 × 500 =
    /// 2,000 devices with the defaults.
    public var commitSlice: Int = 500

    /// The prune breaker: a job whose BadDeviceToken/DeviceTokenNotForTopic answers are more than this share of its
    /// answers (in (0, 1]) is stopped and prunes none of them (see `PruneBreaker`)...
    public var pruneBreakerShare: Double = 0.5
    /// ... once at least this many answers are in.
    public var pruneBreakerMinimum: Int = 20
    var pruneBreaker: PruneBreaker { PruneBreaker(share: pruneBreakerShare, minimumAnswers: pruneBreakerMinimum) }

    /// Where to serve `/metrics`, `/health/live` and `/health/ready` (nil: not served). Port 0 picks one.
    public var operationsHost: String = "127.0.0.1"
    public var operationsPort: Int? = nil
    /// The registry `/metrics` exposes: the one the process bootstrapped swift-metrics with.
    public var metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()

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

/// What happened to one job message.
public enum JobEvent: Sendable, Hashable {
    /// The job finished (every batch done, or stopped by APNs): its app, id and final state.
    case finished(app: String, id: String, state: JobState)
    /// The job is held until its send_at.
    case scheduled(app: String, id: String)
    /// One batch of the job was delivered and written back.
    case batchCompleted(BatchKey)
    /// A throttled job's batch went back to a delay queue: its turn in the job's rate is further off than the
    /// throttle window.
    case batchDeferred(BatchKey)
    /// The job's planning paused after a window of batches (`WorkerConfiguration.planAhead`, or a throttled job's
    /// next 30 s); the scheduler resumes it once fewer than a window of its batches are pending.
    case planningPaused(app: String, id: String)
    /// The job was already final, or another live planner is planning it (`running`): acknowledged without sending.
    case duplicate(app: String, id: String, state: JobState)
    /// The prune breaker stopped the job (its answers look like a misconfigured app); `finished` follows.
    case pruneBreakerTripped(app: String, id: String)
    /// Parked with a reason; the job id if the message was a job at all.
    case parked(id: String?, reason: String)
    /// A message is held while the database is unreachable: one event per wait (numbered from 1 for each
    /// operation held), before trying again.
    case waitingForDatabase(operation: String, wait: Int)
}
