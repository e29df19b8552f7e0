import Metrics

/// The worker's metrics, named for Prometheus, with bounded labels (never a token, job id or topic).
struct WorkerMetrics: Sendable {
    let jobsReceived = Counter(label: "herald_jobs_received_total")
    let jobsParked = Counter(label: "herald_jobs_parked_total")

    /// Counts notifications by outcome (`sent`, `pruned`, `failed`, `expired`) and APNs reason.
    func record(outcome: String, reason: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: "herald_notifications_total", dimensions: [("outcome", outcome), ("reason", reason)])
            .increment(by: count)
    }

    /// Counts finished jobs by final state.
    func jobFinished(state: String) {
        Counter(label: "herald_jobs_finished_total", dimensions: [("state", state)]).increment()
    }
}
