import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import Testing

/// A job's final states are named once in SQL (`herald_job_is_final`, schemas/012) and once in Swift
/// (`JobState.isFinal`): the two must agree on every state.
@Suite(.needsServices) struct JobStateTests {
    @Test func sqlAndSwiftAgreeOnWhichStatesAreFinal() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for state in JobState.allCases {
                let rows = try await store.client.query(
                    "SELECT herald_job_is_final(\(state.rawValue))", logger: Logger(label: "test"))
                var final: Bool? = nil
                for try await value in rows.decode(Bool.self) { final = value }
                #expect(final == state.isFinal, "\(state)")
            }
        }
    }
}

extension JobStateTests {
    /// `herald_end_jobs` (schemas/031), the one writer of a job's end, against the table beside `JobState`: from
    /// every state (and from no row), to every final state, each way that asks for a state; a job changes exactly
    /// when the table says it may, and a way asked for a state that is not final is refused.
    @Test func theOneWriterOfAJobsEndFollowsTheTransitionTable() async throws {
        let logger = Logger(label: "test")
        try await TemporaryDatabase.withMigratedStore { store, _ in
            var n = 0
            for from in [nil] + JobState.allCases.map(Optional.some) {
                for to in JobState.allCases where to.isFinal {
                    for way in from == nil ? ["record", "reject"] : ["stop", "record", "reject"] {
                        n += 1
                        let id = "job-\(n)"
                        if let from {
                            try await store.client.query(
                                "INSERT INTO jobs (app_id, id, state, target_kind) VALUES ('a', \(id), \(from.rawValue), 'tokens')",
                                logger: logger)
                        }
                        let rows = try await store.client.query(
                            """
                            SELECT job_state, ended FROM herald_end_jobs(\(way), ARRAY['a'], ARRAY[\(id)],
                                ARRAY[\(to.rawValue)], ARRAY['why'], ARRAY['tokens'], '{0}', '{0}', '{0}', '{0}', '{0}',
                                '{""}', '{0}', '{""}')
                            """, logger: logger)
                        var returned: [(String, Bool)] = []
                        for try await row in rows.decode((String, Bool).self) { returned.append(row) }
                        let now = try await store.job(app: "a", id: id)?.state
                        let allowed = JobState.canChange(from: from, to: to)
                        let label = "\(from?.rawValue ?? "no row") → \(to) by \(way)"
                        #expect(now == (allowed ? to : from), "\(label)")
                        #expect(returned.count == (allowed ? 1 : 0), "\(label)")
                        #expect(returned.allSatisfy { $0.0 == to.rawValue && $0.1 }, "\(label)")
                    }
                }
            }
            for to in JobState.allCases where !to.isFinal {
                await #expect(throws: (any Error).self, "stop to \(to)") {
                    for try await _ in try await store.client.query(
                        """
                        SELECT * FROM herald_end_jobs('stop', ARRAY['a'], ARRAY['job-1'], ARRAY[\(to.rawValue)],
                            '{""}', '{tokens}', '{0}', '{0}', '{0}', '{0}', '{0}', '{""}', '{0}', '{""}')
                        """, logger: logger)
                    {}
                }
            }
        }
    }
}

extension JobStateTests {
    /// A job refused at intake ends failed with its reason, neither started nor planned (as `jobs watch` and the
    /// reports show it); a job that sent nothing (superseded, expired) ends started and planned.
    @Test func aRejectedJobIsNeitherStartedNorPlanned() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.recordRejectedJob(id: "refused", app: "a", reason: "unknown_app: no such app")
            let refused = try #require(try await store.jobProgress(app: "a", id: "refused"))
            #expect(refused.status.state == .failed && refused.status.error == "unknown_app: no such app")
            #expect(!refused.planned && refused.secondsRunning == nil)
            #expect(
                try await store.endUnsentJob(
                    JobKey(app: "a", id: "superseded"), state: .cancelled, targetKind: "activity", reason: "superseded")
            )
            let superseded = try #require(try await store.jobProgress(app: "a", id: "superseded"))
            #expect(superseded.status.state == .cancelled && superseded.planned)
        }
    }
}

/// The transition table itself, against the life of a job written out by hand.
@Suite struct JobTransitionTableTests {
    /// Each state's next states (nil: a job with no row yet).
    static let expected: [JobState?: Set<JobState>] = [
        nil: [.queued, .scheduled, .running, .done, .failed, .cancelled],
        .queued: [.running, .done, .failed, .cancelled],
        .scheduled: [.queued, .running, .done, .failed, .cancelled],
        .running: [.done, .failed, .cancelled],
        .done: [], .failed: [], .cancelled: [],
    ]

    @Test(arguments: [nil] + JobState.allCases.map(Optional.some))
    func nextStates(_ from: JobState?) {
        let next = Set(JobState.allCases.filter { JobState.canChange(from: from, to: $0) })
        #expect(next == Self.expected[from], "\(from?.rawValue ?? "no row")")
        // No state changes to itself, and nothing leaves a final state.
        #expect(!next.contains { $0 == from })
        if from?.isFinal == true { #expect(next.isEmpty) }
    }

    @Test func everyChangeNamesItsWriterAndEveryEndIsHeraldEndJobs() {
        for transition in JobState.transitions {
            #expect(!transition.by.isEmpty)
            #expect(transition.to.isFinal == transition.by.hasPrefix("herald_end_jobs"), "\(transition)")
        }
        #expect(Set(JobState.transitions).count == JobState.transitions.count, "a change listed twice")
    }
}
