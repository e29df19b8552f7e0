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
