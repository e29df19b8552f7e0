/// Every key of Herald's configuration: its name, variable, flag, type, default and meaning, declared here once.
/// The defaults live only here; `WorkerConfiguration` and `APIConfiguration` keep the same values for code that
/// builds them directly (tests, embedding), and `ConfigurationDefaultsTests` holds the two equal.
extension ConfigurationKey {
    // MARK: Services: every command that talks to the broker or the database

    package static let amqpURL = ConfigurationKey(
        "amqp.url", environment: "HERALD_AMQP_URL", flag: "amqp-url", kind: .url(schemes: ["amqp", "amqps"]),
        default: nil, secret: true,
        "The broker, amqp://user:password@host:port/vhost (amqps:// for TLS, ?cacertfile=/path/ca.pem).")
    package static let databaseURL = ConfigurationKey(
        "database.url", environment: "HERALD_DATABASE_URL", flag: "database-url",
        kind: .url(schemes: ["postgres", "postgresql"]), default: nil, secret: true,
        "The database, postgres://user:password@host:port/database (?sslmode=… for TLS).")
    package static let logLevel = ConfigurationKey(
        "log.level", environment: "HERALD_LOG_LEVEL", flag: "log-level",
        kind: .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]), default: .text("info"),
        "The least severe log level written to standard error.")

    // MARK: Queues: must be the same for every worker and API of a deployment

    package static let queuePrefix = ConfigurationKey(
        "queue.prefix", environment: "HERALD_QUEUE_PREFIX", flag: "queue-prefix", kind: .text, default: .text("herald"),
        "The prefix of every queue name (herald.jobs, herald.batches, …).")
    package static let queueType = ConfigurationKey(
        "queue.type", environment: "HERALD_QUEUE_TYPE", flag: "queue-type", kind: .choice(["classic", "quorum"]),
        default: .text("classic"), "The type of the work queues.")
    package static let retryDelays = ConfigurationKey(
        "queue.retry_delays", environment: "HERALD_QUEUE_RETRY_DELAYS", flag: "retry-delays",
        kind: .durations(.seconds(1)...(.seconds(86_400))),
        default: .durations([.seconds(1), .seconds(10), .seconds(60), .seconds(600)]),
        "The delay queues a failed batch or webhook waits in before its next attempt, one queue per delay.")

    // MARK: The apps file

    package static let appsFile = ConfigurationKey(
        "apps.file", environment: "HERALD_APPS_FILE", flag: "apps-file", kind: .path, default: nil,
        "The apps file (required by the worker; the API's channel routes answer 503 without it); SIGHUP reloads it.")

    // MARK: herald worker

    package static let prefetch = ConfigurationKey(
        "worker.prefetch", environment: "HERALD_WORKER_PREFETCH", flag: "prefetch", kind: .integer(1...65_535),
        default: .integer(1024), "Job messages a worker holds at once (AMQP prefetch on the jobs queue).")
    package static let batchPrefetch = ConfigurationKey(
        "worker.batch_prefetch", environment: "HERALD_WORKER_BATCH_PREFETCH", flag: "batch-prefetch",
        kind: .integer(1...65_535), default: .integer(4),
        "Batches a worker delivers at once (AMQP prefetch on the batches queue).")
    package static let batchSize = ConfigurationKey(
        "worker.batch_size", environment: "HERALD_WORKER_BATCH_SIZE", flag: "batch-size", kind: .integer(1...10_000),
        default: .integer(5000), "Devices per batch: the unit workers share, retry, and may duplicate after a crash.")
    package static let planAhead = ConfigurationKey(
        "worker.plan_ahead", environment: "HERALD_WORKER_PLAN_AHEAD", flag: "plan-ahead",
        kind: .integer(0...1_000_000), default: .integer(100),
        "Batches of a job planned before its planning pauses until fewer are pending; 0 plans a job whole.")
    package static let smallJobGroup = ConfigurationKey(
        "worker.small_job_group", environment: "HERALD_WORKER_SMALL_JOB_GROUP", flag: "small-job-group",
        kind: .integer(0...65_535), default: .integer(0),
        "Small jobs delivered together in one group (one transaction); 0 takes a quarter of worker.prefetch.")
    package static let maxMessageBytes = ConfigurationKey(
        "worker.max_message_bytes", environment: "HERALD_WORKER_MAX_MESSAGE_BYTES", flag: "max-message-bytes",
        kind: .integer(1024...134_217_728), default: .integer(1 << 20),
        "The largest job or batch message read, in bytes; a larger one is parked unread.")
    package static let maxDeliveries = ConfigurationKey(
        "worker.max_deliveries", environment: "HERALD_WORKER_MAX_DELIVERIES", flag: "max-deliveries",
        kind: .integer(1...1000), default: .integer(10),
        "Deliveries of one message (quorum queues count them) before it is parked instead of handled.")
    package static let batchAttempts = ConfigurationKey(
        "worker.batch_attempts", environment: "HERALD_WORKER_BATCH_ATTEMPTS", flag: "batch-attempts",
        kind: .integer(1...100), default: .integer(5),
        "Attempts of one batch in all (the first, then one per retry delay) before its devices are parked.")
    package static let pruneBreakerShare = ConfigurationKey(
        "worker.prune_breaker_share", environment: "HERALD_WORKER_PRUNE_BREAKER_SHARE", flag: "prune-breaker-share",
        kind: .fraction(above: 0, atMost: 1), default: .fraction(0.5),
        "A job stops, pruning none, when BadDeviceToken/DeviceTokenNotForTopic answers exceed this share.")
    package static let pruneBreakerMinimum = ConfigurationKey(
        "worker.prune_breaker_minimum", environment: "HERALD_WORKER_PRUNE_BREAKER_MINIMUM",
        flag: "prune-breaker-minimum", kind: .integer(1...1_000_000), default: .integer(20),
        "Answers the prune breaker needs before it decides.")
    package static let smallJobRunners = ConfigurationKey(
        "worker.small_job_runners", environment: "HERALD_WORKER_SMALL_JOB_RUNNERS", flag: "small-job-runners",
        kind: .integer(1...6), default: .integer(4),
        "Groups of small jobs one worker delivers at once, each holding one of the 8 database connections.")
    package static let commitSlice = ConfigurationKey(
        "worker.commit_slice", environment: "HERALD_WORKER_COMMIT_SLICE", flag: "commit-slice",
        kind: .integer(50...10_000), default: .integer(500),
        "Devices of a batch committed together as it is sent: a worker that dies re-sends at most this many a batch.")
    package static let throttleWindow = ConfigurationKey(
        "worker.throttle_window", environment: "HERALD_WORKER_THROTTLE_WINDOW", flag: "throttle-window",
        kind: .duration(.milliseconds(100)...(.seconds(60))), default: .duration(.seconds(2)),
        "How far ahead a throttled batch may take its turn in its rate; a later turn waits in a delay queue.")
    package static let planningClaimWait = ConfigurationKey(
        "worker.planning_claim_wait", environment: "HERALD_WORKER_PLANNING_CLAIM_WAIT", flag: "planning-claim-wait",
        kind: .duration(.seconds(30)...(.seconds(600))), default: .duration(.seconds(60)),
        "How long a redelivered job waits for its planning claim before the holder is taken to be alive (over the "
            + "~25 s in which PostgreSQL drops a vanished session).")
    package static let schedulerInterval = ConfigurationKey(
        "worker.scheduler_interval", environment: "HERALD_WORKER_SCHEDULER_INTERVAL", flag: "scheduler-interval",
        kind: .duration(.milliseconds(100)...(.seconds(60))), default: .duration(.seconds(1)),
        "How often the scheduler looks for due jobs (and relays events).")
    package static let planningResumeInterval = ConfigurationKey(
        "worker.planning_resume_interval", environment: "HERALD_WORKER_PLANNING_RESUME_INTERVAL",
        flag: "planning-resume-interval", kind: .duration(.milliseconds(10)...(.seconds(10))),
        default: .duration(.milliseconds(200)), "How often the scheduler looks for paused planning to resume.")
    package static let retryAttempts = ConfigurationKey(
        "apns.retry_attempts", environment: "HERALD_APNS_RETRY_ATTEMPTS", flag: "retry-attempts",
        kind: .integer(1...10), default: .integer(2),
        "Attempts in-process, the first included, of a notification APNs answered 429 or 5xx.")
    package static let retryBaseDelay = ConfigurationKey(
        "apns.retry_base_delay", environment: "HERALD_APNS_RETRY_BASE_DELAY", flag: "retry-base-delay",
        kind: .duration(.milliseconds(1)...(.seconds(10))), default: .duration(.milliseconds(100)),
        "The backoff's first ceiling (doubling, with full jitter) before an in-process retry.")
    package static let retryMaximumDelay = ConfigurationKey(
        "apns.retry_max_delay", environment: "HERALD_APNS_RETRY_MAX_DELAY", flag: "retry-max-delay",
        kind: .duration(.milliseconds(1)...(.seconds(10))), default: .duration(.seconds(1)),
        "The longest backoff before any in-process retry; at least retry_base_delay and transport_delay.")
    package static let transportAttempts = ConfigurationKey(
        "apns.transport_attempts", environment: "HERALD_APNS_TRANSPORT_ATTEMPTS", flag: "transport-attempts",
        kind: .integer(1...10), default: .integer(4),
        "Attempts in all of a notification that got no answer (a timeout, a lost connection, a reset stream).")
    package static let transportDelay = ConfigurationKey(
        "apns.transport_delay", environment: "HERALD_APNS_TRANSPORT_DELAY", flag: "transport-delay",
        kind: .duration(.milliseconds(1)...(.seconds(10))), default: .duration(.milliseconds(50)),
        "The backoff's first ceiling (doubling, with full jitter) before a retry of a notification with no answer.")
    package static let connections = ConfigurationKey(
        "apns.connections", environment: "HERALD_APNS_CONNECTIONS", flag: "connections", kind: .integer(1...64),
        default: .integer(2), "HTTP/2 connections to APNs per app and environment.")
    package static let sendConcurrency = ConfigurationKey(
        "apns.send_concurrency", environment: "HERALD_APNS_SEND_CONCURRENCY", flag: "send-concurrency",
        kind: .integer(1...100_000), default: .integer(500),
        "Notifications of one batch (or one group of small jobs) in flight at once.")
    package static let requestTimeout = ConfigurationKey(
        "apns.request_timeout", environment: "HERALD_APNS_REQUEST_TIMEOUT", flag: "request-timeout",
        kind: .duration(.milliseconds(100)...(.seconds(300))), default: .duration(.seconds(10)),
        "How long one APNs request may take before it fails as a timeout (and is retried).")
    package static let metricsHost = ConfigurationKey(
        "metrics.host", environment: "HERALD_METRICS_HOST", flag: "metrics-host", kind: .text,
        default: .text("127.0.0.1"),
        "The address the worker serves /metrics, /health/live and /health/ready on (0.0.0.0 in a container).")
    package static let metricsPort = ConfigurationKey(
        "metrics.port", environment: "HERALD_METRICS_PORT", flag: "metrics-port", kind: .integer(0...65_535),
        default: .integer(9464), "The port of /metrics and the health checks; 0 serves none.")

    // MARK: herald worker: retention (one worker at a time runs it, under an advisory lock)

    /// The longest retention age accepted: ten years.
    package static let longestRetention: Duration = .seconds(3650 * 86_400)

    package static let finishedJobsRetention = ConfigurationKey(
        "retention.finished_jobs", environment: "HERALD_FINISHED_JOBS_RETENTION", flag: "finished-jobs-retention",
        kind: .period(.seconds(60)...longestRetention, forever: true), default: .period(.seconds(7 * 86_400)),
        "How long finished jobs (and so their ids, for idempotency) are kept; under 7d is honoured with a warning.")
    package static let deadTokensRetention = ConfigurationKey(
        "retention.dead_tokens", environment: "HERALD_DEAD_TOKENS_RETENTION", flag: "dead-tokens-retention",
        kind: .period(.seconds(60)...longestRetention, forever: true), default: .period(.seconds(90 * 86_400)),
        "How long dead_tokens rows (the cleanup report, herald devices restore) are kept.")
    package static let deliveryFailuresRetention = ConfigurationKey(
        "retention.delivery_failures", environment: "HERALD_DELIVERY_FAILURES_RETENTION",
        flag: "delivery-failures-retention", kind: .period(.seconds(60)...longestRetention, forever: true),
        default: .period(.seconds(30 * 86_400)), "How long delivery_failures rows are kept.")
    package static let parkedRetention = ConfigurationKey(
        "retention.parked", environment: "HERALD_PARKED_RETENTION", flag: "parked-retention",
        kind: .period(.seconds(60)...longestRetention, forever: true), default: .period(.seconds(14 * 86_400)),
        "How long a message stays in the parking queue (herald.parked) before retention drops it.")
    package static let retentionInterval = ConfigurationKey(
        "retention.interval", environment: "HERALD_RETENTION_INTERVAL", flag: "retention-interval",
        kind: .period(.seconds(10)...(.seconds(86_400)), forever: false), default: .period(.seconds(300)),
        "How often each worker tries to run retention (the first pass one interval after it starts).")

    // MARK: herald worker: webhooks (docs/events.md)

    package static let webhookConcurrencyPerApp = ConfigurationKey(
        "webhooks.concurrency_per_app", environment: "HERALD_WEBHOOKS_CONCURRENCY_PER_APP",
        flag: "webhook-concurrency-per-app", kind: .integer(1...1000), default: .integer(8),
        "Webhook requests one worker has in flight for one app; more of its events wait in a delay queue.")
    package static let webhookBreakerFailures = ConfigurationKey(
        "webhooks.breaker_failures", environment: "HERALD_WEBHOOKS_BREAKER_FAILURES", flag: "webhook-breaker-failures",
        kind: .integer(1...1000), default: .integer(5),
        "Failures in a row after which an endpoint's circuit breaker opens (no request until its probe).")
    package static let webhookBreakerOpen = ConfigurationKey(
        "webhooks.breaker_open", environment: "HERALD_WEBHOOKS_BREAKER_OPEN", flag: "webhook-breaker-open",
        kind: .duration(.seconds(1)...(.seconds(3600))), default: .duration(.seconds(30)),
        "How long an open breaker lets no request through before one probe request.")

    // MARK: herald api

    package static let apiHost = ConfigurationKey(
        "api.host", environment: "HERALD_API_HOST", flag: "host", kind: .text, default: .text("127.0.0.1"),
        "The address the HTTP API listens on (0.0.0.0 in a container).")
    package static let apiPort = ConfigurationKey(
        "api.port", environment: "HERALD_API_PORT", flag: "port", kind: .integer(0...65_535), default: .integer(8080),
        "The port the HTTP API listens on; 0 picks a free one.")
    package static let apiMaximumBodySize = ConfigurationKey(
        "api.maximum_body_size", environment: "HERALD_API_MAXIMUM_BODY_SIZE", flag: "maximum-body-size",
        kind: .integer(1024...134_217_728), default: .integer(1 << 20),
        "The largest request body the API accepts, in bytes (a job of 10,000 tokens is about 700 KB).")
    package static let apiIdleTimeout = ConfigurationKey(
        "api.idle_timeout", environment: "HERALD_API_IDLE_TIMEOUT", flag: "idle-timeout",
        kind: .duration(.seconds(1)...(.seconds(3600))), default: .duration(.seconds(60)),
        "How long a client connection may stay open with no request in progress before the API closes it.")

    package static let apiRegisterRate = ConfigurationKey(
        "api.register_requests_per_second", environment: "HERALD_API_REGISTER_REQUESTS_PER_SECOND",
        flag: "register-requests-per-second", kind: .integer(1...1_000_000), default: .integer(100),
        "Requests a second of a register-only key without a rate of its own, in each API process; over it, 429.")
    package static let apiRegisterDevicesPerHour = ConfigurationKey(
        "api.register_devices_per_hour", environment: "HERALD_API_REGISTER_DEVICES_PER_HOUR",
        flag: "register-devices-per-hour", kind: .integer(0...100_000_000), default: .integer(10_000),
        "New devices a register-only key may register per hour (all API processes together) unless it has a quota.")
    package static let apiActivityTokensPerDevice = ConfigurationKey(
        "api.activity_tokens_per_device", environment: "HERALD_API_ACTIVITY_TOKENS_PER_DEVICE",
        flag: "activity-tokens-per-device", kind: .integer(0...100_000), default: .integer(20),
        "Live Activity update tokens a register-only key may register per device, unless the key has its own quota.")

    // MARK: herald migrate

    package static let schemasDirectory = ConfigurationKey(
        "migrate.schemas", environment: "HERALD_SCHEMAS_DIR", flag: "schemas", kind: .path, default: .text("schemas"),
        "The directory of the NNN_name.sql migrations herald migrate applies.")

    /// Every key, in the order of the documentation.
    package static let all: [ConfigurationKey] = [
        amqpURL, databaseURL, logLevel,
        queuePrefix, queueType, retryDelays,
        appsFile,
        prefetch, batchPrefetch, batchSize, planAhead, smallJobGroup, maxMessageBytes, maxDeliveries, batchAttempts,
        pruneBreakerShare, pruneBreakerMinimum, smallJobRunners, commitSlice, throttleWindow, planningClaimWait,
        schedulerInterval,
        planningResumeInterval, retryAttempts, retryBaseDelay, retryMaximumDelay, transportAttempts, transportDelay,
        connections, sendConcurrency, requestTimeout, metricsHost, metricsPort,
        finishedJobsRetention, deadTokensRetention, deliveryFailuresRetention, parkedRetention, retentionInterval,
        webhookConcurrencyPerApp, webhookBreakerFailures, webhookBreakerOpen,
        apiHost, apiPort, apiMaximumBodySize, apiIdleTimeout, apiRegisterRate, apiRegisterDevicesPerHour,
        apiActivityTokensPerDevice,
        schemasDirectory,
    ]

    /// The key named `name`.
    package static func named(_ name: String) -> ConfigurationKey? { all.first { $0.name == name } }

    /// The configuration file's path: `--config` or this variable. Not a key itself (a file cannot name a file).
    package static let configFileEnvironment = "HERALD_CONFIG_FILE"
}
