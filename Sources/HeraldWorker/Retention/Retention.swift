import HeraldMessaging
import HeraldStore
import Logging
import ServiceLifecycle

/// Removes what is past its age: finished jobs (past the idempotency window), `dead_tokens` and `delivery_failures`
/// rows, and messages in the parking queues (`WorkerConfiguration`'s `…Retention` settings). Parked webhook events go
/// with their `webhook_events` rows, at the parking queue's age (`parkedRetention`).
///
/// Every worker tries every `retentionInterval`, starting one interval after it starts; the one that takes the
/// advisory lock (`Store.withRetentionLock`) does the pass, the others skip it. Rows go in chunks of
/// `Store.retentionChunk`, each its own short statement; parked messages by their parking time, up to
/// `ParkedMessages` scan's worth a pass. `herald_retention_removed_total{what}` counts what went.
struct Retention: Sendable {
    let store: Store
    let configuration: WorkerConfiguration
    let parked: ParkedMessages
    let metrics: WorkerMetrics
    let logger: Logger

    /// Parked messages one pass looks at.
    static let parkedScanLimit = 10_000

    /// Runs until the worker shuts down; a failed pass is logged and tried again next interval.
    func run() async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            // Woken by a graceful shutdown too: a worker stopping does not wait out the interval.
            do {
                try await cancelWhenGracefulShutdown { [configuration] in
                    try await configuration.clock.sleep(configuration.retentionInterval)
                }
            } catch {
                return
            }
            do {
                if let removed = try await runPass(), removed.values.contains(where: { $0 > 0 }) {
                    logger.info(
                        "retention removed expired records",
                        metadata: removed.reduce(into: [:]) { $0[$1.key] = "\($1.value)" })
                }
            } catch {
                logger.error("retention pass failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One pass under the retention lock: what it removed of each kind, or nil if another worker holds the lock.
    func runPass() async throws -> [String: Int]? {
        let rules: [(RetainedRecords, Duration?)] = [
            (.jobs, configuration.idempotencyRetention),
            (.deadTokens, configuration.deadTokenRetention),
            (.deliveryFailures, configuration.deliveryFailureRetention),
            (.webhookEvents, configuration.parkedRetention),
        ]
        let store = self.store
        let metrics = self.metrics
        let parked = self.parked
        let webhooksParked = ParkedMessages(
            connection: parked.connection, topology: parked.topology, queue: parked.topology.webhooksParked)
        let parkedRetention = configuration.parkedRetention
        return try await store.withRetentionLock {
            var removed: [String: Int] = [:]
            for case (let what, let age?) in rules {
                removed[what.rawValue] = try await store.deleteAllExpired(what, olderThan: age) { chunk in
                    metrics.retentionRemoved(what.rawValue, count: chunk)
                }
            }
            if let parkedRetention {
                let dropped = try await parked.dropExpired(maximumAge: parkedRetention, scanLimit: Self.parkedScanLimit)
                metrics.retentionRemoved("parked", count: dropped)
                removed["parked"] = dropped
                let webhooks = try await webhooksParked.dropExpired(
                    maximumAge: parkedRetention, scanLimit: Self.parkedScanLimit)
                metrics.retentionRemoved("webhooks_parked", count: webhooks)
                removed["webhooks_parked"] = webhooks
            }
            return removed
        }
    }
}
