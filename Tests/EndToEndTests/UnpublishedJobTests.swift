import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// A job the API recorded but never published (it died between its insert and its publish): the workers' scheduler
/// publishes it after the grace period, and it is delivered once; one whose publish the API saw confirmed is left
/// alone.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct UnpublishedJobTests {
    /// What `POST /v1/apps/{app}/notifications` records before it publishes.
    static func record(_ job: Job, _ store: Store) async throws -> PreparedJob {
        let prepared = try PreparedJob.prepare(job) { UUID().uuidString }
        let spec = String(decoding: try JSONEncoder().encode(prepared.spec), as: UTF8.self)
        guard case .created = try await store.enqueue(prepared, spec: spec) else {
            Issue.record("the job was not recorded anew")
            return prepared
        }
        return prepared
    }

    @Test func aJobTheAPIRecordedButNeverPublishedIsPublishedByTheWorkersOnce() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 2)
            // Never published: the API died. And one the API published and saw confirmed, whose message is lost
            // here on purpose: the sweeper must not publish it (its message is the API's to send).
            _ = try await Self.record(WorkerHarness.broadcast(id: "orphan"), harness.store)
            let confirmed = try await Self.record(WorkerHarness.broadcast(id: "confirmed"), harness.store)
            try await harness.store.markPublished(confirmed.key)

            let worker = try harness.startWorker { $0.unpublishedJobGrace = .zero }
            #expect(await harness.waitUntilFinished("orphan") == .done)
            #expect(Set(harness.received(job: "orphan")) == Set(devices.map(\.token.hex)))
            #expect(harness.received(job: "orphan").count == devices.count)
            // The next pass of the sweeper (another scheduler tick) must not take it again.
            #expect(
                try await harness.store.releaseUnpublishedJobs(olderThan: .zero, limit: 10) { _ in
                    Issue.record("a job was published twice")
                } == 0)
            #expect(try await harness.store.job(app: WorkerHarness.app, id: "confirmed")?.state == .queued)
            try await worker.stop()
        }
    }
}
