import APNSCore
import APNSTransport
import Foundation
import HeraldCore
import HeraldStore
import Logging
import Synchronization

/// Delivers one prepared job: resolves its devices page by page, sends each page with bounded concurrency, retries
/// transient failures in-process, writes each page's results back in one transaction, and finishes the job.
struct Deliverer: Sendable {
    let store: Store
    let clients: APNSClients
    let apps: AppsFile
    let configuration: WorkerConfiguration
    let metrics: WorkerMetrics
    let logger: Logger

    /// How a job ended.
    enum Result: Sendable, Equatable {
        case finished(JobState)
        /// The job id was already final: nothing was sent again.
        case alreadyFinished(JobState)
    }

    func deliver(_ job: PreparedJob) async throws(StoreError) -> Result {
        if let state = try await store.startJob(id: job.id, app: job.app, targetKind: job.audience.kind) {
            return .alreadyFinished(state)
        }
        guard let app = apps.app(job.app), let client = clients.client(for: job.app) else {
            // The consumer checks the app first; this is only reachable if the apps file changed under us.
            try await store.finishJob(id: job.id, state: .failed, error: "unknown app")
            return .finished(.failed)
        }
        var logger = self.logger
        logger[metadataKey: "job"] = "\(job.id)"
        logger[metadataKey: "app"] = "\(job.app)"

        let expired = job.template.expiration.map { $0 != 0 && $0 < Int64(Date().timeIntervalSince1970) } ?? false
        var first = true
        var jobFailure: APNSReason? = nil
        var pager = AudiencePager(job: job, store: store, pageSize: configuration.pageSize)
        while let page = try await pager.next() {
            var writeBack = WriteBack(jobID: job.id, app: job.app)
            if first {
                writeBack.rejectedTokens = job.invalidTokenCount
                writeBack.targeted += job.invalidTokenCount
                first = false
            }
            writeBack.targeted += page.count
            if expired {
                writeBack.expired = page.count
                metrics.record(outcome: "expired", reason: "expired", count: page.count)
            } else {
                jobFailure = await send(page, of: job, app: app, client: client, into: &writeBack)
            }
            try await store.write(writeBack)
            if jobFailure != nil { break }
        }

        if let jobFailure {
            logger.warning("job stopped by APNs", metadata: ["reason": "\(jobFailure)"])
            try await store.finishJob(id: job.id, state: .failed, error: "APNs rejected the job: \(jobFailure)")
            return .finished(.failed)
        }
        try await store.finishJob(id: job.id, state: .done)
        return .finished(.done)
    }

    /// Sends one page, filling `writeBack`. Returns the reason if APNs rejected the job as a whole.
    private func send(
        _ page: [DeviceToken],
        of job: PreparedJob,
        app: AppConfiguration,
        client: APNSClient,
        into writeBack: inout WriteBack
    ) async -> APNSReason? {
        let stop = StopFlag()
        let policy = configuration.retryPolicy
        let results = await withTaskGroup(of: (DeviceToken, Disposition, Int).self) { group in
            var results: [(DeviceToken, Disposition, Int)] = []
            results.reserveCapacity(page.count)
            var iterator = page.makeIterator()
            var inFlight = 0
            while true {
                if inFlight >= configuration.sendConcurrency, let result = await group.next() {
                    results.append(result)
                    inFlight -= 1
                }
                guard let token = iterator.next() else { break }
                let request = job.template.request(to: token, bundleID: app.topic)
                group.addTask {
                    var attempt = 1
                    while true {
                        let result: DeliveryResult
                        if stop.isSet {
                            return (token, .failJob(reason: APNSReason(rawValue: "JobStopped")), attempt - 1)
                        }
                        do {
                            result = .answered(try await client.send(request))
                        } catch let error as APNSTransportError {
                            result = .transportFailure(error.code.description)
                        } catch {
                            result = .transportFailure("transport")
                        }
                        let decided = disposition(
                            for: result, attempt: attempt, policy: policy, jitter: Double.random(in: 0...1)
                        )
                        if case .retry(_, let delay) = decided {
                            try? await Task.sleep(for: delay)
                            attempt += 1
                            continue
                        }
                        if case .failJob = decided { stop.set() }
                        return (token, decided, attempt - 1)
                    }
                }
                inFlight += 1
            }
            for await result in group { results.append(result) }
            return results
        }

        var jobFailure: APNSReason? = nil
        for (token, decided, retries) in results {
            writeBack.retried += retries
            switch decided {
            case .delivered:
                writeBack.sent += 1
                metrics.record(outcome: "sent", reason: "", count: 1)
            case .prune(let reason, let timestamp):
                writeBack.prunes.append(.init(token: token, reason: reason.rawValue, apnsTimestamp: timestamp))
                metrics.record(outcome: "pruned", reason: reason.rawValue, count: 1)
            case .failDevice(let reason):
                writeBack.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                metrics.record(outcome: "failed", reason: reason.rawValue, count: 1)
            case .exhausted(let reason), .retry(let reason, _):
                writeBack.failures.append(.init(token: token, status: nil, reason: reason))
                metrics.record(outcome: "failed", reason: "transient", count: 1)
            case .failJob(let reason):
                if reason.rawValue != "JobStopped", jobFailure == nil { jobFailure = reason }
                writeBack.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                metrics.record(outcome: "failed", reason: reason.isKnown ? reason.rawValue : "job_stopped", count: 1)
            }
        }
        return jobFailure
    }

}

extension PreparedJob.Audience {
    var kind: String {
        switch self {
        case .tokens: "tokens"
        case .users: "users"
        case .topic: "topic"
        case .all: "all"
        }
    }
}

/// Set once when APNs rejects the job as a whole, so that the rest of the page is not sent.
final class StopFlag: Sendable {
    private let flag = Atomic(false)

    var isSet: Bool { flag.load(ordering: .relaxed) }

    func set() { flag.store(true, ordering: .relaxed) }
}
