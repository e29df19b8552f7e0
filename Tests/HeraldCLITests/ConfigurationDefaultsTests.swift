import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldWorker
import RabbitMQ
import Testing

@testable import HeraldCLI

/// The registry's defaults are the ones the configuration structs keep for code that builds them directly, and each
/// worker and API key reaches the field it sets.
@Suite struct ConfigurationDefaultsTests {
    static let urls = [
        "HERALD_AMQP_URL": "amqp://u:p@127.0.0.1:5672/%2f", "HERALD_DATABASE_URL": "postgres://u:p@db/h",
    ]

    /// An apps file with no apps, for the keys that name one.
    static func withAppsFile<T>(_ body: (String) throws -> T) throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString).json").path
        try #"{"apps": []}"#.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    @Test func theWorkerStructKeepsTheRegistrysDefaults() throws {
        try Self.withAppsFile { path in
            var environment = Self.urls
            environment["HERALD_APPS_FILE"] = path
            let settings = try ConfigurationResolver(environment: environment, file: nil).resolve(WorkerCommand.keys)
            let resolved = try WorkerCommand.configuration(settings)
            let plain = WorkerConfiguration(
                amqp: resolved.amqp, database: resolved.database, apps: resolved.apps, appsDirectory: ".")
            #expect(resolved.topology == plain.topology)
            #expect(resolved.topology == Topology())
            #expect(resolved.prefetch == plain.prefetch)
            #expect(resolved.batchPrefetch == plain.batchPrefetch)
            #expect(resolved.batchSize == plain.batchSize)
            #expect(resolved.planAhead == plain.planAhead)
            #expect(resolved.smallJobGroupSize == plain.smallJobGroupSize)
            #expect(resolved.maximumMessageBytes == plain.maximumMessageBytes)
            #expect(resolved.maximumDeliveries == plain.maximumDeliveries)
            #expect(resolved.maximumBatchAttempts == plain.maximumBatchAttempts)
            #expect(resolved.pruneBreakerShare == plain.pruneBreakerShare)
            #expect(resolved.pruneBreakerMinimum == plain.pruneBreakerMinimum)
            #expect(resolved.smallJobRunners == plain.smallJobRunners)
            #expect(resolved.commitSlice == plain.commitSlice)
            #expect(resolved.throttleWindow == plain.throttleWindow)
            #expect(resolved.planningClaimWait == plain.planningClaimWait)
            #expect(resolved.schedulerInterval == plain.schedulerInterval)
            #expect(resolved.planningResumeInterval == plain.planningResumeInterval)
            #expect(resolved.retryPolicy == plain.retryPolicy)
            #expect(resolved.connectionsPerApp == plain.connectionsPerApp)
            #expect(resolved.sendConcurrency == plain.sendConcurrency)
            #expect(resolved.requestTimeout == plain.requestTimeout)
            #expect(resolved.operationsHost == plain.operationsHost)
            // The one difference, on purpose: `herald worker` serves /metrics on 9464 unless told 0, while code that
            // builds a worker itself (tests, embedding) serves it only when it asks for a port.
            #expect(resolved.operationsPort == 9464 && plain.operationsPort == nil)
            #expect(resolved.appsFile == path)
            #expect(resolved.idempotencyRetention == plain.idempotencyRetention)
            #expect(resolved.deadTokenRetention == plain.deadTokenRetention)
            #expect(resolved.deliveryFailureRetention == plain.deliveryFailureRetention)
            #expect(resolved.parkedRetention == plain.parkedRetention)
            #expect(resolved.retentionInterval == plain.retentionInterval)
            #expect(resolved.webhookConcurrencyPerApp == plain.webhookConcurrencyPerApp)
            #expect(resolved.webhookBreakerThreshold == plain.webhookBreakerThreshold)
            #expect(resolved.webhookBreakerOpenFor == plain.webhookBreakerOpenFor)
        }
    }

    @Test func theAPIStructKeepsTheRegistrysDefaults() throws {
        let settings = try ConfigurationResolver(environment: Self.urls, file: nil).resolve(ApiCommand.keys)
        let resolved = try ApiCommand.configuration(settings)
        let plain = APIConfiguration(amqp: resolved.amqp, database: resolved.database)
        #expect(resolved.host == plain.host)
        #expect(resolved.port == plain.port)
        #expect(resolved.maximumBodySize == plain.maximumBodySize)
        #expect(resolved.idleTimeout == plain.idleTimeout)
        #expect(resolved.registerRequestsPerSecond == plain.registerRequestsPerSecond)
        #expect(resolved.registerDevicesPerHour == plain.registerDevicesPerHour)
        #expect(resolved.activityTokensPerDevice == plain.activityTokensPerDevice)
        #expect(resolved.topology == plain.topology)
        #expect(resolved.apps == nil)
    }

    @Test func everyWorkerKeyReachesItsField() throws {
        try Self.withAppsFile { path in
            let flags: [ConfigurationKey: String] = [
                .appsFile: path, .queuePrefix: "t", .queueType: "quorum", .retryDelays: "2s,20s",
                .prefetch: "100", .batchPrefetch: "3", .batchSize: "250", .planAhead: "0", .smallJobGroup: "7",
                .maxMessageBytes: "4096", .maxDeliveries: "5", .batchAttempts: "3", .pruneBreakerShare: "0.25",
                .pruneBreakerMinimum: "50", .connections: "4", .sendConcurrency: "64", .requestTimeout: "1500ms",
                .metricsHost: "0.0.0.0", .metricsPort: "0", .finishedJobsRetention: "0", .deadTokensRetention: "12h",
                .deliveryFailuresRetention: "45d", .parkedRetention: "90m", .retentionInterval: "30s",
                .webhookConcurrencyPerApp: "3", .webhookBreakerFailures: "9", .webhookBreakerOpen: "2m",
                .smallJobRunners: "2", .commitSlice: "250", .throttleWindow: "5s", .planningClaimWait: "90s",
                .schedulerInterval: "500ms",
                .planningResumeInterval: "50ms", .retryAttempts: "3", .retryBaseDelay: "20ms", .retryMaximumDelay: "2s",
                .transportAttempts: "6", .transportDelay: "10ms",
            ]
            #expect(Set(flags.keys) == Set(WorkerCommand.keys).subtracting([.amqpURL, .databaseURL, .logLevel]))
            let settings = try ConfigurationResolver(flags: flags, environment: Self.urls, file: nil)
                .resolve(WorkerCommand.keys)
            let configuration = try WorkerCommand.configuration(settings)
            #expect(
                configuration.topology
                    == Topology(prefix: "t", queueType: .quorum, retryDelays: [.seconds(2), .seconds(20)]))
            #expect(configuration.prefetch == 100 && configuration.batchPrefetch == 3 && configuration.batchSize == 250)
            #expect(configuration.planAhead == nil && configuration.smallJobGroupSize == 7)
            #expect(configuration.maximumMessageBytes == 4096 && configuration.maximumDeliveries == 5)
            #expect(configuration.maximumBatchAttempts == 3)
            #expect(configuration.pruneBreakerShare == 0.25 && configuration.pruneBreakerMinimum == 50)
            #expect(configuration.connectionsPerApp == 4 && configuration.sendConcurrency == 64)
            #expect(configuration.requestTimeout == .milliseconds(1500))
            #expect(configuration.operationsHost == "0.0.0.0" && configuration.operationsPort == nil)
            #expect(configuration.idempotencyRetention == nil)
            #expect(configuration.deadTokenRetention == .seconds(12 * 3600))
            #expect(configuration.deliveryFailureRetention == .seconds(45 * 86_400))
            #expect(configuration.parkedRetention == .seconds(90 * 60))
            #expect(configuration.retentionInterval == .seconds(30))
            #expect(configuration.webhookConcurrencyPerApp == 3 && configuration.webhookBreakerThreshold == 9)
            #expect(configuration.webhookBreakerOpenFor == .seconds(120))
            #expect(configuration.smallJobRunners == 2 && configuration.throttleWindow == .seconds(5))
            #expect(configuration.commitSlice == 250)
            #expect(configuration.planningClaimWait == .seconds(90))
            #expect(configuration.schedulerInterval == .milliseconds(500))
            #expect(configuration.planningResumeInterval == .milliseconds(50))
            #expect(
                configuration.retryPolicy
                    == RetryPolicy(
                        maximumAttempts: 3, baseDelay: .milliseconds(20), maximumDelay: .seconds(2),
                        transportAttempts: 6, transportDelay: .milliseconds(10)))
        }
    }

    /// The longest in-process backoff below a first one is refused, naming both keys.
    @Test func aRetryMaximumBelowItsFirstDelayIsRefused() throws {
        try Self.withAppsFile { path in
            for (first, value) in [(ConfigurationKey.retryBaseDelay, "500ms"), (.transportDelay, "300ms")] {
                let flags: [ConfigurationKey: String] = [.appsFile: path, .retryMaximumDelay: "200ms", first: value]
                let settings = try ConfigurationResolver(flags: flags, environment: Self.urls, file: nil)
                    .resolve(WorkerCommand.keys)
                let error = try #require(throws: ConfigurationError.self) { try WorkerCommand.configuration(settings) }
                #expect(error.message.contains("apns.retry_max_delay") && error.message.contains(first.name))
            }
        }
    }

    @Test func everyAPIKeyReachesItsField() throws {
        let flags: [ConfigurationKey: String] = [
            .apiHost: "0.0.0.0", .apiPort: "9999", .apiMaximumBodySize: "2048", .queuePrefix: "a",
            .apiIdleTimeout: "15s",
            .apiRegisterRate: "7", .apiRegisterDevicesPerHour: "70", .apiActivityTokensPerDevice: "3",
        ]
        let settings = try ConfigurationResolver(flags: flags, environment: Self.urls, file: nil).resolve(
            ApiCommand.keys)
        let configuration = try ApiCommand.configuration(settings)
        #expect(configuration.host == "0.0.0.0" && configuration.port == 9999)
        #expect(configuration.maximumBodySize == 2048 && configuration.topology.prefix == "a")
        #expect(configuration.idleTimeout == .seconds(15))
        #expect(configuration.registerRequestsPerSecond == 7 && configuration.registerDevicesPerHour == 70)
        #expect(configuration.activityTokensPerDevice == 3)
    }
}
