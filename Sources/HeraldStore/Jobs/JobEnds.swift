import HeraldCore
import Logging
import Metrics
import PostgresNIO

/// A job `herald_end_jobs` (schemas/031) wrote.
public struct EndedJob: Sendable, Hashable {
    /// The job; nil on a row that stands for several (`jobs`): what a small-job group returns.
    public var key: JobKey?
    /// Its state now.
    public var state: JobState
    /// Whether this call ended it (a final state it did not have before).
    public var ended: Bool
    /// The state it had, where the way of ending says it (nil otherwise, or when it had no row).
    public var before: JobState?
    /// How many jobs the row stands for: 1, or a group's jobs that ended in `state`.
    public var jobs: Int = 1
}

/// The ways a job ends: each is one branch of `herald_end_jobs` (schemas/031), which says what each writes.
enum JobEnding: String, Sendable {
    /// A group of small jobs written inside its claim: done with their counts, or running for the exceptions.
    case group
    /// Small jobs their group left running: counts added, running ones done.
    case counted
    /// After a batch's completion or the end of planning: done if nothing is left.
    case complete
    /// A job not yet final takes the final state asked, with its reason and counts.
    case stop
    /// A job that sent nothing ends, with or without a row.
    case record
    /// The same, only for a job no worker started.
    case recordUnstarted = "record_unstarted"
    /// A job refused before any worker started it (parked at intake): failed, neither started nor planned.
    case reject
}

/// One call of `herald_end_jobs`: the only statement that sets a job's state to done, failed or cancelled. Prepared
/// once per connection. The arrays are parallel (one element per job); each is filled to the jobs' number, so a way
/// that does not read one gets its default.
struct EndJobs: PostgresPreparedStatement {
    static let name = "herald_end_jobs_v1"
    static let sql = """
        SELECT job_app, job_id, job_state, ended, state_before, jobs
        FROM herald_end_jobs($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        """
    typealias Row = EndedJob

    /// One job's end as the caller asks for it.
    struct Item: Sendable {
        var key: JobKey
        var state: JobState? = nil
        var error: String? = nil
        var kind: String = "tokens"
        var counts = Counts()
        /// The new row of a small job (`group`).
        var spec: String = ""
        var publishedAt: Int64 = 0
        var cursor: String = ""
    }

    /// Counts added to the job's (by `counted` and `group`), or replacing them (by `stop`, when `targeted` is given).
    struct Counts: Sendable {
        var targeted: Int64 = 0
        var sent: Int64 = 0
        var failed: Int64 = 0
        var expired: Int64 = 0
        var retried: Int64 = 0
    }

    let how: JobEnding
    let items: [Item]

    init(_ how: JobEnding, _ items: [Item]) {
        self.how = how
        self.items = items
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 14)
        bindings.append(how.rawValue)
        bindings.append(items.map(\.key.app))
        bindings.append(items.map(\.key.id))
        bindings.append(items.map { $0.state?.rawValue ?? "" })
        bindings.append(items.map { $0.error ?? "" })
        bindings.append(items.map(\.kind))
        bindings.append(items.map(\.counts.targeted))
        bindings.append(items.map(\.counts.sent))
        bindings.append(items.map(\.counts.failed))
        bindings.append(items.map(\.counts.expired))
        bindings.append(items.map(\.counts.retried))
        bindings.append(items.map(\.spec))
        bindings.append(items.map(\.publishedAt))
        bindings.append(items.map(\.cursor))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> EndedJob {
        let (app, id, state, ended, before, jobs) = try row.decode(
            (String?, String?, String, Bool, String?, Int64).self)
        guard let now = JobState(rawValue: state) else {
            throw StoreError(.queryFailed, "herald_end_jobs returned a state Herald does not know: \(state)")
        }
        let key = app.flatMap { app in id.map { JobKey(app: app, id: $0) } }
        return EndedJob(
            key: key, state: now, ended: ended, before: before.flatMap(JobState.init(rawValue:)), jobs: Int(jobs))
    }
}

extension EndJobs.Counts {
    /// A write-back's counts.
    init(_ writeBack: WriteBack) {
        self.init(
            targeted: Int64(writeBack.targeted), sent: Int64(writeBack.sent), failed: Int64(writeBack.rejectedTokens),
            expired: Int64(writeBack.expired), retried: Int64(writeBack.retried))
    }
}

extension EndJobs {
    /// A group's rows (`Store.claimSmallJobs`): each done with its counts, or left running (`done` nil) with its
    /// spec, which a retry batch reads again (a done job's is not kept: nothing reads it again).
    init(group rows: [SmallJobRow]) {
        self.init(
            .group,
            rows.map { row in
                Item(
                    key: JobKey(app: row.app, id: row.id), state: row.done == nil ? nil : .done,
                    counts: row.done.map(Counts.init) ?? Counts(), spec: row.done == nil ? row.spec : "",
                    publishedAt: row.publishedAt, cursor: String(row.tokenCount))
            })
    }
}

extension Store {
    /// Ends jobs on `connection` (inside the caller's transaction). The caller counts what ended once its
    /// transaction has committed (`metrics.ended`).
    static func endJobs(_ statement: EndJobs, on connection: PostgresConnection, logger: Logger) async throws
        -> [EndedJob]
    {
        guard !statement.items.isEmpty else { return [] }
        var written: [EndedJob] = []
        for try await row in try await connection.execute(statement, logger: logger) { written.append(row) }
        return written
    }

    /// Ends jobs in a statement of their own, and counts what ended.
    @discardableResult
    func endJobs(_ statement: EndJobs, _ what: String) async throws(StoreError) -> [EndedJob] {
        guard !statement.items.isEmpty else { return [] }
        let written = try await run(what) {
            var written: [EndedJob] = []
            for try await row in try await client.execute(statement, logger: logger) { written.append(row) }
            return written
        }
        metrics.ended(written)
        return written
    }
}

/// The store's metrics. `herald_jobs_finished_total` is counted here only, from what `herald_end_jobs` returned
/// as ended, after the commit: every end of every job, in every process that ends jobs (workers and the API).
public struct StoreMetrics: Sendable {
    /// Where the counts go; nil: the process's `MetricsSystem`, as it is when they are counted (a store may be made
    /// before the process sets its metrics up, so no counter is made ahead of time).
    private let factory: (any MetricsFactory)?

    /// - Parameter factory: where the metrics go; nil is the process's (`MetricsSystem`).
    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
    }

    private func counter(_ state: JobState) -> Counter {
        let dimensions = [("state", state.rawValue)]
        if let factory { return Counter(label: "herald_jobs_finished_total", dimensions: dimensions, factory: factory) }
        return Counter(label: "herald_jobs_finished_total", dimensions: dimensions)
    }

    /// Counts the jobs that ended.
    func ended(_ rows: some Sequence<EndedJob>) {
        count(rows.lazy.filter(\.ended).map { ($0.state, $0.jobs) })
    }

    /// Counts jobs that ended in these states.
    func ended(_ states: some Sequence<JobState>) {
        count(states.lazy.map { ($0, 1) })
    }

    /// One counter increment per state, however many jobs.
    private func count(_ ends: some Sequence<(JobState, Int)>) {
        var counts: [JobState: Int] = [:]
        for (state, jobs) in ends { counts[state, default: 0] += jobs }
        for (state, count) in counts { counter(state).increment(by: count) }
    }
}
