import Metrics

/// The worker's metrics, named for Prometheus, with bounded labels (never a token, job id or topic).
struct WorkerMetrics: Sendable {
    let jobsReceived = Counter(label: "herald_jobs_received_total")
    let jobsParked = Counter(label: "herald_jobs_parked_total")
    let batchesPublished = Counter(label: "herald_batches_published_total")
    let batchesCompleted = Counter(label: "herald_batches_completed_total")
    let batchesDuplicate = Counter(label: "herald_batches_duplicate_total")
    /// Throttled batches sent back to a delay queue until their turn in the job's rate is near.
    let batchesDeferred = Counter(label: "herald_batches_deferred_total")
    let retriesQueued = Counter(label: "herald_retries_total")
    let devicesParked = Counter(label: "herald_devices_parked_total")
    /// Jobs stopped by the prune breaker (an app that looks misconfigured).
    let pruneBreakerTrips = Counter(label: "herald_prune_breaker_trips_total")
    let jobsScheduledReleased = Counter(label: "herald_jobs_released_total")
    /// Jobs whose paused planning the scheduler resumed (`WorkerConfiguration.planAhead`, throttled jobs).
    let planningResumed = Counter(label: "herald_planning_resumed_total")
    /// Events published to the events exchange (`job.finished.<app>`, `token.pruned.<app>`, …).
    let eventsPublished = Counter(label: "herald_events_published_total")
    let latency = Timer(label: "herald_notification_latency_seconds", preferredDisplayUnit: .seconds)
    let inFlightBatches = Meter(label: "herald_batches_in_flight")

    /// Counts notifications by outcome (`sent`, `pruned`, `failed`, `expired`, `retried`) and APNs reason.
    func record(outcome: String, reason: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: "herald_notifications_total", dimensions: [("outcome", outcome), ("reason", reason)])
            .increment(by: count)
    }

    /// Counts webhook deliveries by outcome (`delivered`, `retried`, `parked`, `deferred`, `refused`, `dropped`).
    func webhook(_ outcome: String) {
        Counter(label: "herald_webhooks_total", dimensions: [("outcome", outcome)]).increment()
    }

    /// Counts what retention removed: `jobs`, `dead_tokens`, `delivery_failures` or `parked`.
    func retentionRemoved(_ what: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: "herald_retention_removed_total", dimensions: [("what", what)]).increment(by: count)
    }
}
