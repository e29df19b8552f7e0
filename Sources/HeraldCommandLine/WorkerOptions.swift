import ArgumentParser

/// `herald worker`'s keys as flags (the service, queue and apps file keys are in their own groups).
package struct WorkerOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.prefetch)) var prefetch: String?
    @Option(help: ArgumentHelp(.batchPrefetch)) var batchPrefetch: String?
    @Option(help: ArgumentHelp(.batchSize)) var batchSize: String?
    @Option(help: ArgumentHelp(.planAhead)) var planAhead: String?
    @Option(help: ArgumentHelp(.smallJobGroup)) var smallJobGroup: String?
    @Option(help: ArgumentHelp(.maxMessageBytes)) var maxMessageBytes: String?
    @Option(help: ArgumentHelp(.maxDeliveries)) var maxDeliveries: String?
    @Option(help: ArgumentHelp(.batchAttempts)) var batchAttempts: String?
    @Option(help: ArgumentHelp(.pruneBreakerShare)) var pruneBreakerShare: String?
    @Option(help: ArgumentHelp(.pruneBreakerMinimum)) var pruneBreakerMinimum: String?
    @Option(help: ArgumentHelp(.smallJobRunners)) var smallJobRunners: String?
    @Option(help: ArgumentHelp(.commitSlice)) var commitSlice: String?
    @Option(help: ArgumentHelp(.throttleWindow)) var throttleWindow: String?
    @Option(help: ArgumentHelp(.planningClaimWait)) var planningClaimWait: String?
    @Option(help: ArgumentHelp(.schedulerInterval)) var schedulerInterval: String?
    @Option(help: ArgumentHelp(.planningResumeInterval)) var planningResumeInterval: String?
    @Option(help: ArgumentHelp(.retryAttempts)) var retryAttempts: String?
    @Option(help: ArgumentHelp(.retryBaseDelay)) var retryBaseDelay: String?
    @Option(help: ArgumentHelp(.retryMaximumDelay)) var retryMaxDelay: String?
    @Option(help: ArgumentHelp(.transportAttempts)) var transportAttempts: String?
    @Option(help: ArgumentHelp(.transportDelay)) var transportDelay: String?
    @Option(help: ArgumentHelp(.connections)) var connections: String?
    @Option(help: ArgumentHelp(.sendConcurrency)) var sendConcurrency: String?
    @Option(help: ArgumentHelp(.requestTimeout)) var requestTimeout: String?
    @Option(help: ArgumentHelp(.metricsHost)) var metricsHost: String?
    @Option(help: ArgumentHelp(.metricsPort)) var metricsPort: String?

    package static let keys: [ConfigurationKey] = [
        .prefetch, .batchPrefetch, .batchSize, .planAhead, .smallJobGroup, .maxMessageBytes, .maxDeliveries,
        .batchAttempts, .pruneBreakerShare, .pruneBreakerMinimum, .smallJobRunners, .commitSlice, .throttleWindow,
        .planningClaimWait,
        .schedulerInterval, .planningResumeInterval, .retryAttempts, .retryBaseDelay, .retryMaximumDelay,
        .transportAttempts, .transportDelay, .connections, .sendConcurrency, .requestTimeout, .metricsHost,
        .metricsPort,
    ]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        [
            (.prefetch, prefetch), (.batchPrefetch, batchPrefetch), (.batchSize, batchSize), (.planAhead, planAhead),
            (.smallJobGroup, smallJobGroup), (.maxMessageBytes, maxMessageBytes), (.maxDeliveries, maxDeliveries),
            (.batchAttempts, batchAttempts), (.pruneBreakerShare, pruneBreakerShare),
            (.pruneBreakerMinimum, pruneBreakerMinimum), (.smallJobRunners, smallJobRunners),
            (.commitSlice, commitSlice),
            (.throttleWindow, throttleWindow), (.planningClaimWait, planningClaimWait),
            (.schedulerInterval, schedulerInterval), (.planningResumeInterval, planningResumeInterval),
            (.retryAttempts, retryAttempts), (.retryBaseDelay, retryBaseDelay), (.retryMaximumDelay, retryMaxDelay),
            (.transportAttempts, transportAttempts), (.transportDelay, transportDelay), (.connections, connections),
            (.sendConcurrency, sendConcurrency), (.requestTimeout, requestTimeout), (.metricsHost, metricsHost),
            (.metricsPort, metricsPort),
        ]
    }
}

/// `herald worker`'s retention keys as flags: how long finished jobs, dead-token records, delivery failures and
/// parked messages are kept, and how often retention runs.
package struct RetentionOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.finishedJobsRetention)) var finishedJobsRetention: String?
    @Option(help: ArgumentHelp(.deadTokensRetention)) var deadTokensRetention: String?
    @Option(help: ArgumentHelp(.deliveryFailuresRetention)) var deliveryFailuresRetention: String?
    @Option(help: ArgumentHelp(.parkedRetention)) var parkedRetention: String?
    @Option(help: ArgumentHelp(.retentionInterval)) var retentionInterval: String?

    package static let keys: [ConfigurationKey] = [
        .finishedJobsRetention, .deadTokensRetention, .deliveryFailuresRetention, .parkedRetention,
        .retentionInterval,
    ]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        [
            (.finishedJobsRetention, finishedJobsRetention), (.deadTokensRetention, deadTokensRetention),
            (.deliveryFailuresRetention, deliveryFailuresRetention), (.parkedRetention, parkedRetention),
            (.retentionInterval, retentionInterval),
        ]
    }
}

/// `herald api`'s keys as flags.
package struct APIOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.apiHost)) var host: String?
    @Option(help: ArgumentHelp(.apiPort)) var port: String?
    @Option(help: ArgumentHelp(.apiMaximumBodySize)) var maximumBodySize: String?
    @Option(help: ArgumentHelp(.apiIdleTimeout)) var idleTimeout: String?
    @Option(help: ArgumentHelp(.apiRegisterRate)) var registerRequestsPerSecond: String?
    @Option(help: ArgumentHelp(.apiRegisterDevicesPerHour)) var registerDevicesPerHour: String?
    @Option(help: ArgumentHelp(.apiActivityTokensPerDevice)) var activityTokensPerDevice: String?

    package static let keys: [ConfigurationKey] = [
        .apiHost, .apiPort, .apiMaximumBodySize, .apiIdleTimeout, .apiRegisterRate, .apiRegisterDevicesPerHour,
        .apiActivityTokensPerDevice,
    ]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        [
            (.apiHost, host), (.apiPort, port), (.apiMaximumBodySize, maximumBodySize), (.apiIdleTimeout, idleTimeout),
            (.apiRegisterRate, registerRequestsPerSecond), (.apiRegisterDevicesPerHour, registerDevicesPerHour),
            (.apiActivityTokensPerDevice, activityTokensPerDevice),
        ]
    }
}

/// `herald migrate`'s key as a flag (`herald doctor` reads it too, to check the migrations are current).
package struct MigrationOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.schemasDirectory)) var schemas: String?

    package var givenFlags: [(key: ConfigurationKey, text: String?)] { [(.schemasDirectory, schemas)] }
}

/// `herald worker`'s webhook keys as flags: each app's lane and each endpoint's circuit breaker.
package struct WebhookOptions: ConfigurationOptions {
    package init() {}

    @Option(help: ArgumentHelp(.webhookConcurrencyPerApp)) var webhookConcurrencyPerApp: String?
    @Option(help: ArgumentHelp(.webhookBreakerFailures)) var webhookBreakerFailures: String?
    @Option(help: ArgumentHelp(.webhookBreakerOpen)) var webhookBreakerOpen: String?

    package static let keys: [ConfigurationKey] = [
        .webhookConcurrencyPerApp, .webhookBreakerFailures, .webhookBreakerOpen,
    ]

    package var givenFlags: [(key: ConfigurationKey, text: String?)] {
        [
            (.webhookConcurrencyPerApp, webhookConcurrencyPerApp), (.webhookBreakerFailures, webhookBreakerFailures),
            (.webhookBreakerOpen, webhookBreakerOpen),
        ]
    }
}
