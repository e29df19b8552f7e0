import APNSCore
import HeraldCore
import Synchronization

/// Set when the provider rejects the job as a whole, so that the rest of the batch — and the worker's other batches
/// of the same job — are not sent.
final class StopFlag: Sendable {
    /// The reason given to notifications not sent because the job stopped.
    static let stopped = ProviderReason(rawValue: "JobStopped")

    private let job: JobKey
    private let registry: StoppedJobs
    private let flag = Atomic(false)
    /// The registry's version last looked at: checked per notification, the registry is read only when it changed.
    private let seenVersion = Atomic(0)

    init(job: JobKey, registry: StoppedJobs) {
        self.job = job
        self.registry = registry
    }

    var isSet: Bool {
        if flag.load(ordering: .relaxed) { return true }
        let version = registry.version
        guard version != seenVersion.load(ordering: .relaxed) else { return false }
        seenVersion.store(version, ordering: .relaxed)
        guard registry.contains(job) else { return false }
        flag.store(true, ordering: .relaxed)
        return true
    }

    func set() {
        flag.store(true, ordering: .relaxed)
        registry.insert(job)
    }
}

/// The jobs a worker has seen rejected as a whole (bounded: the oldest are forgotten).
final class StoppedJobs: Sendable {
    private let jobs = Mutex<[JobKey]>([])
    private let insertions = Atomic(0)

    /// Changes whenever a job is added (after it is readable through `contains`).
    var version: Int { insertions.load(ordering: .acquiring) }

    func contains(_ job: JobKey) -> Bool { jobs.withLock { $0.contains(job) } }

    func insert(_ job: JobKey) {
        let added = jobs.withLock { jobs in
            guard !jobs.contains(job) else { return false }
            jobs.append(job)
            if jobs.count > 64 { jobs.removeFirst() }
            return true
        }
        if added { insertions.add(1, ordering: .releasing) }
    }
}
