import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldWorker
import RabbitMQ

extension WorkerCommand {
    /// Every key `herald worker` reads.
    static let keys: [ConfigurationKey] =
        [.amqpURL, .databaseURL, .logLevel] + QueueOptions.keys + [.appsFile] + WorkerOptions.keys
        + RetentionOptions.keys + WebhookOptions.keys

    /// The keys without which the worker cannot start.
    static let requiredKeys: Set<ConfigurationKey> = [.amqpURL, .databaseURL, .appsFile]

    /// The worker's configuration from the resolved keys and the apps file they name.
    static func configuration(_ settings: ResolvedConfiguration) throws -> WorkerConfiguration {
        guard let (apps, directory) = try AppsFile.read(settings) else {
            preconditionFailure("apps.file is required")
        }
        var configuration = WorkerConfiguration(
            amqp: try AMQPConfiguration(url: settings.requiredText(.amqpURL)),
            database: try DatabaseConfiguration(url: settings.requiredText(.databaseURL)),
            apps: apps,
            appsDirectory: directory
        )
        configuration.appsFile = settings.text(.appsFile)
        configuration.topology = Topology(settings)
        configuration.prefetch = UInt16(settings.integer(.prefetch))
        configuration.batchPrefetch = UInt16(settings.integer(.batchPrefetch))
        configuration.batchSize = settings.integer(.batchSize)
        let planAhead = settings.integer(.planAhead)
        configuration.planAhead = planAhead == 0 ? nil : planAhead
        let group = settings.integer(.smallJobGroup)
        configuration.smallJobGroupSize = group == 0 ? nil : group
        configuration.maximumMessageBytes = settings.integer(.maxMessageBytes)
        configuration.maximumDeliveries = settings.integer(.maxDeliveries)
        configuration.maximumBatchAttempts = settings.integer(.batchAttempts)
        configuration.pruneBreakerShare = settings.fraction(.pruneBreakerShare)
        configuration.pruneBreakerMinimum = settings.integer(.pruneBreakerMinimum)
        configuration.smallJobRunners = settings.integer(.smallJobRunners)
        configuration.commitSlice = settings.integer(.commitSlice)
        configuration.throttleWindow = settings.duration(.throttleWindow)
        configuration.planningClaimWait = settings.duration(.planningClaimWait)
        configuration.schedulerInterval = settings.duration(.schedulerInterval)
        configuration.planningResumeInterval = settings.duration(.planningResumeInterval)
        let longest = settings.duration(.retryMaximumDelay)
        for first in [ConfigurationKey.retryBaseDelay, .transportDelay] where settings.duration(first) > longest {
            throw ConfigurationError(
                "\(ConfigurationKey.retryMaximumDelay.name) (\(longest)) is below \(first.name) "
                    + "(\(settings.duration(first))): the longest backoff must be at least the first")
        }
        configuration.retryPolicy = RetryPolicy(
            maximumAttempts: settings.integer(.retryAttempts), baseDelay: settings.duration(.retryBaseDelay),
            maximumDelay: settings.duration(.retryMaximumDelay),
            transportAttempts: settings.integer(.transportAttempts),
            transportDelay: settings.duration(.transportDelay))
        configuration.connectionsPerApp = settings.integer(.connections)
        configuration.sendConcurrency = settings.integer(.sendConcurrency)
        configuration.requestTimeout = settings.duration(.requestTimeout)
        configuration.operationsHost = settings.requiredText(.metricsHost)
        let port = settings.integer(.metricsPort)
        configuration.operationsPort = port == 0 ? nil : port
        configuration.idempotencyRetention = settings.period(.finishedJobsRetention)
        configuration.deadTokenRetention = settings.period(.deadTokensRetention)
        configuration.deliveryFailureRetention = settings.period(.deliveryFailuresRetention)
        configuration.parkedRetention = settings.period(.parkedRetention)
        configuration.retentionInterval = settings.requiredPeriod(.retentionInterval)
        configuration.webhookConcurrencyPerApp = settings.integer(.webhookConcurrencyPerApp)
        configuration.webhookBreakerThreshold = settings.integer(.webhookBreakerFailures)
        configuration.webhookBreakerOpenFor = settings.duration(.webhookBreakerOpen)
        return configuration
    }
}
