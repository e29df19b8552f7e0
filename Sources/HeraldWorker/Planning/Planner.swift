import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ

/// What planning needs of PostgreSQL. `Store` is it; the worker's fast tests use a fake.
protocol PlanningStore: Sendable {
    func devicesPageBoundary(app: String, filter: DeviceFilter, after: String?, limit: Int) async throws
        -> (count: Int, last: String?)
    func recordPlanned(_ key: BatchKey, cursor: String?) async throws -> Bool
    func planSingleBatch(_ key: BatchKey, cursor: String?) async throws
    func finishPlanning(job: JobKey) async throws -> JobState?
    func pausePlanning(job: JobKey, resumeBelow: Int) async throws -> Bool
    func databaseAnswers(within timeout: Duration) async -> Bool
}

extension Store: PlanningStore {}

/// Where planning publishes the batches every worker shares (`herald.batches`, with confirms).
protocol BatchPublishing: Sendable {
    /// Publishes `batch` at the broker priority of its job (`PreparedJob.brokerPriority`).
    func publish(_ batch: BatchMessage, priority: UInt8) async throws
}

/// Publishes batches to the topology's batches queue over an AMQP connection.
struct AMQPBatchPublisher: BatchPublishing {
    let connection: AMQPConnection
    let queue: String

    func publish(_ batch: BatchMessage, priority: UInt8) async throws {
        try await connection.publish(
            Array(try JSONEncoder().encode(batch)),
            routingKey: queue,
            properties: AMQPProperties(contentType: "application/json", messageID: "\(batch.key)", priority: priority),
            mandatory: true
        )
    }
}

/// Planning: turns a registered job into batches — explicit tokens in chunks, everything else by keyset pages of
/// its audience in PostgreSQL, so that memory never grows with the audience. It never sends and never waits for a
/// send: batches are published to `herald.batches` for every worker to share; a job routed as one batch
/// (`Route.oneBatch`) is planned in one statement (`planOneBatch`), and its consumer delivers that batch, whose
/// completion ends the job.
///
/// Planning resumes where it stopped: the cursor moves only after a batch is published, so a crash re-publishes at
/// most the batch it was on (and its delivery is deduplicated by the batch's completion record).
///
/// Planning is paced for a job with a window (`window(for:)`): after that many batches it pauses the job and
/// returns; the scheduler publishes the job message again once fewer than a window of them are pending, and
/// planning goes on from the cursor. So the batches queue never holds more than about two windows of such a job:
/// a later job's batches wait behind that, not behind the whole job. Only the holder of
/// the job's planning claim plans it (`JobConsumer`, `PlanningClaims`): two copies of a job never plan at once.
struct Planner: Sendable {
    let store: any PlanningStore
    let publisher: any BatchPublishing
    /// Devices per batch.
    let batchSize: Int
    /// A throttled job's batches hold about this much of its rate (`WorkerConfiguration.throttleWindow`).
    var throttleWindow: Duration = .seconds(2)
    /// The apps, for their own send rates (`max_per_second`): their jobs are planned as throttled ones.
    var apps = AppsFile(apps: [])
    /// The apps file in use, when the worker reloads it (`APNSClients.apps`); `apps` otherwise.
    var liveApps: (@Sendable () -> AppsFile)? = nil
    /// Batches of an unthrottled job planned before its planning pauses (`WorkerConfiguration.planAhead`); nil
    /// plans it whole.
    var planAhead: Int? = nil
    let metrics: WorkerMetrics
    let logger: Logger
    var onJobHandled: (@Sendable (JobEvent) -> Void)? = nil
    /// Time and chance for the outage waiter's backoff.
    var clock: HeraldClock = .system

    /// Holds planning's writes through an outage of the database.
    var outages: OutageWaiter {
        let store = self.store
        return OutageWaiter(
            answers: { await store.databaseAnswers(within: $0) }, logger: logger, onEvent: onJobHandled, clock: clock)
    }

    /// Plans a job routed as one batch (`Route.oneBatch`) and returns that batch, for its consumer to deliver: in
    /// one statement the batch exists (pending) and planning is finished, so the batch's own completion ends the
    /// job. A job planned so before (a redelivered copy: the worker that delivered it died or gave it back) gets
    /// its batch again, which its completion record makes harmless if it was delivered.
    func planOneBatch(_ job: PreparedJob, planned: Bool) async throws -> BatchMessage {
        guard case .tokens(let tokens) = job.audience else {
            throw JobError(.invalidTarget, "only a job of listed tokens is planned as one batch")
        }
        let batch = BatchMessage(app: job.app, job: job.id, seq: 0, attempt: 1, tokens: tokens.map(\.hex))
        if !planned { try await store.planSingleBatch(batch.key, cursor: String(tokens.count)) }
        return batch
    }

    /// Publishes a one-batch job's batch to the batches queue after all (its delivery was deferred to a turn in a
    /// send rate its app took after the job was routed).
    func handOver(_ batch: BatchMessage, of job: PreparedJob) async throws {
        try await publish(batch, of: job)
    }

    /// Plans the job from `cursor` into batches on `herald.batches`; returns the job's final state if planning
    /// finished it (an audience with no device, or every batch already done).
    func plan(_ job: PreparedJob, cursor: String?, nextSeq: Int, planned: Bool) async throws -> JobState? {
        if !planned {
            switch job.audience {
            case .tokens(let tokens):
                let from = Int(cursor ?? "0") ?? 0
                if try await planTokens(job, tokens: tokens, from: from, nextSeq: nextSeq) == .paused { return nil }
            case .users, .topic, .all:
                if try await planAudience(job, cursor: cursor, nextSeq: nextSeq) == .paused { return nil }
            case .activity, .channel:
                throw JobError(.invalidTarget, "a Live Activity target is resolved before planning, not planned")
            }
        }
        return try await finishPlanning(job)
    }

    /// How a planning pass ended.
    private enum Pass {
        /// Every batch is published: planning is finished.
        case complete
        /// Paused after a window of batches, or stopped because the job no longer runs.
        case paused
    }

    /// Devices per batch of `job`: a throttled job's hold about `throttleWindow` of its rate, so that a batch
    /// whose turn has come is sent within about that.
    func devicesPerBatch(for job: PreparedJob) -> Int {
        guard let rate = rate(of: job) else { return batchSize }
        return max(1, min(batchSize, Int((Double(rate) * (throttleWindow / .seconds(1))).rounded(.down))))
    }

    /// Batches of `job` planned before planning pauses: about 30 s of a throttled job's rate (at least 2), else
    /// `planAhead`; nil plans the job whole.
    func window(for job: PreparedJob) -> Int? {
        guard let rate = rate(of: job) else { return planAhead.map { max($0, 1) } }
        return max(2, Int((Double(rate) * 30 / Double(devicesPerBatch(for: job))).rounded(.up)))
    }

    /// Pauses the job's planning after a window of batches, held through an outage. Returns how the pass ends:
    /// paused, or complete if the job no longer runs (planning then ends as for a stopped job).
    private func pause(_ job: PreparedJob, window: Int) async throws -> Pass {
        let paused = try await outages.untilDone("pausing planning") {
            try await store.pausePlanning(job: job.key, resumeBelow: window)
        }
        guard paused else { return .complete }
        onJobHandled?(.planningPaused(app: job.app, id: job.id))
        return .paused
    }

    /// The rate `job` is sent at (`AppsFile.sendRate`); nil if neither it nor its app has one.
    func rate(of job: PreparedJob) -> Int? {
        (liveApps?() ?? apps).sendRate(app: job.app, throttle: job.throttlePerSecond)
    }

    private func finishPlanning(_ job: PreparedJob) async throws -> JobState? {
        try await store.finishPlanning(job: job.key)
    }

    /// Publishes the tokens' batches from `start`.
    private func planTokens(_ job: PreparedJob, tokens: [DeviceToken], from start: Int, nextSeq: Int) async throws
        -> Pass
    {
        let batchSize = devicesPerBatch(for: job)
        let window = window(for: job)
        var index = start
        var seq = nextSeq
        while index < tokens.count {
            if let window, seq - nextSeq == window { return try await pause(job, window: window) }
            let slice = tokens[index..<min(index + batchSize, tokens.count)]
            let batch = BatchMessage(app: job.app, job: job.id, seq: seq, attempt: 1, tokens: slice.map(\.hex))
            try await publish(batch, of: job)
            index += slice.count
            guard try await recordPlanned(batch.key, cursor: String(index)) else { return .complete }
            seq += 1
        }
        return .complete
    }

    /// Publishes the audience's batches page by page, however few pages there are.
    private func planAudience(_ job: PreparedJob, cursor start: String?, nextSeq: Int) async throws -> Pass {
        let batchSize = devicesPerBatch(for: job)
        let window = window(for: job)
        var cursor = start
        var seq = nextSeq
        while true {
            // Only the page's size and last token: the delivery run reads the devices themselves.
            let page = try await store.devicesPageBoundary(
                app: job.app, filter: job.audience.filter, after: cursor, limit: batchSize)
            guard let last = page.last else { return .complete }
            if let window, seq - nextSeq == window { return try await pause(job, window: window) }
            let batch = BatchMessage(app: job.app, job: job.id, seq: seq, attempt: 1, after: cursor, through: last)
            try await publish(batch, of: job)
            guard try await recordPlanned(batch.key, cursor: last) else {
                logger.info("planning stopped: job no longer running", metadata: ["job": "\(job.id)"])
                return .complete
            }
            cursor = last
            seq += 1
            if page.count < batchSize { return .complete }
        }
    }

    /// Moves the cursor past a batch just published, held through an outage: planning again from the old cursor
    /// would publish the batch a second time, and two copies in flight at once could both be sent.
    private func recordPlanned(_ key: BatchKey, cursor: String) async throws -> Bool {
        try await outages.untilDone("recording a planned batch") {
            try await store.recordPlanned(key, cursor: cursor)
        }
    }

    private func publish(_ batch: BatchMessage, of job: PreparedJob) async throws {
        try await publisher.publish(batch, priority: job.brokerPriority(bulk: batch.isBulk))
        metrics.batchesPublished.increment()
    }
}

extension PreparedJob.Audience {
    /// The device filter that reads this audience from PostgreSQL (tokens are never read by filter).
    var filter: DeviceFilter {
        switch self {
        case .tokens: .all
        case .users(let users): .users(users)
        case .topic(let topic, let locales): locales.map { .locales(.topic(topic), $0) } ?? .topic(topic)
        case .all(let locales): locales.map { .locales(.all, $0) } ?? .all
        // Live Activity targets are resolved into tokens before planning (`LiveActivityStage`): should one reach
        // a device read, it matches no device rather than every device of the app.
        case .activity, .channel: .users([])
        }
    }
}
