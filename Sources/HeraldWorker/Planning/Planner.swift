import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ

/// Turns a registered job into batches: explicit tokens in chunks, everything else by keyset pages of its audience
/// in PostgreSQL, so that memory never grows with the audience. A job that fits in one batch is delivered right
/// here; larger ones are published to `herald.batches` with confirms for every worker to share.
///
/// Planning resumes where it stopped: the cursor moves only after a batch is published, so a crash re-publishes at
/// most the batch it was on (and its delivery is deduplicated by the batch's completion record). Only the holder of
/// the job's planning claim plans it (`JobConsumer`, `PlanningClaims`): two copies of a job never plan at once.
struct Planner: Sendable {
    let store: Store
    let configuration: WorkerConfiguration
    let publisher: AMQPConnection
    let deliverer: BatchDeliverer
    let metrics: WorkerMetrics
    let logger: Logger

    /// Plans the job from `cursor`; returns the job's final state if it finished while planning.
    ///
    /// `redelivered`: the broker handed this message out before and it was not acknowledged (a worker died or gave
    /// it back). A job that fits in one batch was being delivered by that worker itself, not through the batches
    /// queue, so its batch is delivered again here unless it is done.
    func plan(_ job: PreparedJob, cursor: String?, nextSeq: Int, planned: Bool, redelivered: Bool) async throws
        -> JobState?
    {
        if planned, redelivered, case .tokens(let tokens) = job.audience, tokens.count <= configuration.batchSize,
            nextSeq == 1
        {
            let batch = BatchMessage(app: job.app, job: job.id, seq: 0, attempt: 1, tokens: tokens.map(\.hex))
            if case .completed(let finished?) = try await deliverer.deliver(batch) { return finished }
        }
        if !planned {
            switch job.audience {
            case .tokens(let tokens):
                if cursor == nil && tokens.count <= configuration.batchSize {
                    // The common small job: one batch, planned and finished in its own completion transaction.
                    let batch = BatchMessage(app: job.app, job: job.id, seq: 0, attempt: 1, tokens: tokens.map(\.hex))
                    try await store.planSingleBatch(batch.key, cursor: String(tokens.count))
                    if case .completed(let finished) = try await deliverer.deliver(batch) { return finished }
                    return nil
                }
                try await planTokens(job, tokens: tokens, from: Int(cursor ?? "0") ?? 0, nextSeq: nextSeq)
            case .users, .topic, .all:
                try await planAudience(job, cursor: cursor, nextSeq: nextSeq)
            }
        }
        let finished = try await store.finishPlanning(job: job.key)
        if let finished { metrics.jobFinished(state: finished.rawValue) }
        return finished
    }

    private func planTokens(_ job: PreparedJob, tokens: [DeviceToken], from start: Int, nextSeq: Int) async throws {
        let size = configuration.batchSize
        var index = start
        var seq = nextSeq
        while index < tokens.count {
            let slice = tokens[index..<min(index + size, tokens.count)]
            let batch = BatchMessage(app: job.app, job: job.id, seq: seq, attempt: 1, tokens: slice.map(\.hex))
            try await publish(batch)
            index += slice.count
            guard try await recordPlanned(batch.key, cursor: String(index)) else { return }
            seq += 1
        }
    }

    private func planAudience(_ job: PreparedJob, cursor start: String?, nextSeq: Int) async throws {
        let size = configuration.batchSize
        var cursor = start
        var seq = nextSeq
        while true {
            // Only the page's size and last token: the deliverer reads the devices themselves.
            let page = try await store.devicesPageBoundary(
                app: job.app, filter: job.audience.filter, after: cursor, limit: size)
            if seq == 0 && page.count < size {
                // The whole audience fits in one batch: deliver it here instead of through the queue.
                let batch = BatchMessage(
                    app: job.app, job: job.id, seq: 0, attempt: 1, after: nil, through: page.last ?? "")
                _ = try await deliverer.deliver(batch)
                _ = try await store.recordPlanned(batch.key, cursor: page.last)
                return
            }
            guard let last = page.last else { return }
            let batch = BatchMessage(app: job.app, job: job.id, seq: seq, attempt: 1, after: cursor, through: last)
            try await publish(batch)
            guard try await recordPlanned(batch.key, cursor: last) else {
                logger.info("planning stopped: job no longer running", metadata: ["job": "\(job.id)"])
                return
            }
            cursor = last
            seq += 1
            if page.count < size { return }
        }
    }

    /// Moves the cursor past a batch just published, held through an outage: planning again from the old cursor
    /// would publish the batch a second time, and two copies in flight at once could both be sent.
    private func recordPlanned(_ key: BatchKey, cursor: String) async throws -> Bool {
        try await deliverer.outages.untilDone("recording a planned batch") {
            try await store.recordPlanned(key, cursor: cursor)
        }
    }

    private func publish(_ batch: BatchMessage) async throws {
        try await publisher.publish(
            Array(try JSONEncoder().encode(batch)),
            routingKey: configuration.topology.batches,
            properties: AMQPProperties(contentType: "application/json", messageID: "\(batch.key)"),
            mandatory: true
        )
        metrics.batchesPublished.increment()
    }
}
