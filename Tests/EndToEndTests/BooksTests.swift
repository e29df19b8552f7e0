import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// A job's counters count devices, not attempts: whatever retries, lost connections and retry batches happened, a
/// finished job's targeted = sent + pruned + failed + expired. Every send of a job's notification to a device
/// carries the same apns-id.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct BooksTests {
    @Test func connectionsCutEveryFewHundredRequestsAndRetriesLeaveBooksThatBalance() async throws {
        try await WorkerHarness.with {
            // Connections cut every 100 streams (about seven cuts for the broadcast); 503 twice for each f1a7
            // device (each goes to a retry queue at least once); the dead ones are pruned.
            $0.dropConnectionAfterStreams = 100
            $0.injectedFailures = [
                .serviceUnavailable(tokenPrefix: "f1a7", timesPerToken: 2)
            ]
            $0.deadTokenPrefixes = ["dead"]
        } _: { harness in
            let live = try await harness.importDevices(count: 600)
            let retried = try await harness.importDevices(count: 20, prefix: "f1a7")
            let dead = try await harness.importDevices(count: 30, prefix: "dead")
            let worker = try harness.startWorker { $0.batchSize = 200 }
            try await harness.publish(WorkerHarness.broadcast(id: "cut"))
            #expect(await harness.waitUntilFinished("cut") == .done)
            try await worker.stop()

            let counters = try #require(try await harness.job("cut")?.counters)
            let devices = live.count + retried.count + dead.count
            #expect(counters.targeted == devices)
            #expect(counters.sent + counters.pruned + counters.failed + counters.expired == counters.targeted)
            #expect(counters.pruned == dead.count)
            #expect(counters.failed == 0)
            // Devices that needed a delayed retry, each counted once however many retry batches it went through
            // (with connections cut this often, many devices besides the 503 ones need one).
            #expect(counters.retried >= retried.count && counters.retried <= devices)
            // Every live device reached; every send to a device carried the job's id for that device.
            let ids = NotificationID(app: WorkerHarness.app, job: "cut")
            let records = harness.simulator.records.filter { record in
                guard let object = try? JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any]
                else { return false }
                return object["job"] as? String == "cut"
            }
            #expect(Set(records.map(\.token)) == Set((live + retried).map(\.token.hex)))
            for record in records {
                #expect(record.apnsID == ids.id(for: DeviceToken(trustedHex: record.token)).description)
            }
            // The dead-token records keep the apns-id the pruning answer was to.
            let rows = try await harness.store.client.query(
                "SELECT token, apns_id::text FROM dead_tokens WHERE job_id = 'cut'", logger: harness.logger)
            var recorded = 0
            for try await (token, apnsID) in rows.decode((String, String?).self) {
                #expect(apnsID == ids.id(for: DeviceToken(trustedHex: token)).description)
                recorded += 1
            }
            #expect(recorded == dead.count)
        }
    }

    @Test func aFailedDeviceIsLoggedAndRecordedWithItsApnsIdNeverItsToken() async throws {
        try await WorkerHarness.with {
            // An answer Herald does not know, for these devices only: each fails alone (kept, not pruned).
            $0.injectedFailures = [InjectedFailure(status: 400, reason: "SomethingNew", tokenPrefix: "bad0")]
        } _: { harness in
            _ = try await harness.importDevices(count: 40)
            let failing = try await harness.importDevices(count: 25, prefix: "bad0")
            let worker = try harness.startWorker()
            try await harness.publish(WorkerHarness.broadcast(id: "logged"))
            #expect(await harness.waitUntilFinished("logged") == .done)
            try await worker.stop()

            #expect(try await harness.job("logged")?.counters.failed == failing.count)
            let ids = NotificationID(app: WorkerHarness.app, job: "logged")
            let expected = Set(failing.map { ids.id(for: $0.token).description })
            // At most `failuresLoggedPerBatch` lines per batch, the rest counted in one line.
            let lines = harness.logs.entries("notification failed")
            #expect(!lines.isEmpty && lines.count <= failing.count)
            for line in lines {
                #expect(line.level == .notice)
                #expect(line.metadata["job"] == "\(WorkerHarness.app)/logged")
                #expect(line.metadata["reason"] == "SomethingNew")
                #expect(line.metadata["apns-id"].map(expected.contains) == true)
            }
            let more = harness.logs.entries("more notifications failed").compactMap { $0.metadata["failed"] }
            #expect(lines.count + more.compactMap { Int($0) }.reduce(0, +) == failing.count)
            // No line anywhere carries a device token.
            for entry in harness.logs.recorded {
                let text = ([entry.message] + entry.metadata.values).joined(separator: " ")
                #expect(!failing.contains { text.contains($0.token.hex) })
            }
            // The failure records carry the same ids.
            let rows = try await harness.store.client.query(
                "SELECT apns_id::text FROM delivery_failures WHERE job_id = 'logged'", logger: harness.logger)
            var recorded: Set<String> = []
            for try await apnsID in rows.decode(String?.self) { recorded.insert(apnsID ?? "none") }
            #expect(recorded == expected)
        }
    }
}
