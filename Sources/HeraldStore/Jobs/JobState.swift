/// A job's state as PostgreSQL records it.
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    case queued, scheduled, running, done, failed, cancelled

    /// Whether the job will not run again (`herald_job_is_final`, schemas/012).
    public var isFinal: Bool { self == .done || self == .failed || self == .cancelled }
}

extension JobState {
    /// One change of a job's state, and what makes it.
    public struct Transition: Sendable, Hashable {
        /// The state before; nil for a job that had no row yet.
        public var from: JobState?
        public var to: JobState
        /// Who writes it.
        public var by: String
    }

    /// Every change of state a job can make: the one table of a job's life. The changes to a final state are all
    /// written by `herald_end_jobs` (schemas/031, `Store.endJobs`), the others by the statement named; a final
    /// state never changes (parked-job replay deletes the row and starts again). `JobEndTests` drives the SQL
    /// through this table.
    public static let transitions: [Transition] = {
        var table: [Transition] = [
            Transition(from: nil, to: .queued, by: "the API enqueues it (Store.enqueue)"),
            Transition(
                from: nil, to: .scheduled, by: "the API or a worker registers it for later (Store.enqueue, register)"),
            Transition(from: nil, to: .running, by: "a worker starts it (Store.register, or its small-job group)"),
            Transition(from: .queued, to: .running, by: "a worker starts it (Store.register, or its small-job group)"),
            Transition(from: .scheduled, to: .queued, by: "the scheduler releases it (Store.releaseDueJobs)"),
            Transition(from: .scheduled, to: .running, by: "a worker starts it when it is due (Store.register)"),
        ]
        for from in [nil, .queued, .scheduled, .running] as [JobState?] {
            for to in allCases where to.isFinal {
                table.append(Transition(from: from, to: to, by: "herald_end_jobs (Store.endJobs)"))
            }
        }
        return table
    }()

    /// Whether a job in `from` (nil: no row yet) may change to `to`.
    public static func canChange(from: JobState?, to: JobState) -> Bool {
        transitions.contains { $0.from == from && $0.to == to }
    }
}
