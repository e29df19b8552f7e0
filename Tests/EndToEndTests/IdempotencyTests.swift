import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Issue 16's "send once, per app" end to end: job ids are scoped by app, concurrent copies of one job send once,
/// and a badge increment counts once per device per job whatever retries happen.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct IdempotencyTests {
    @Test func theSameIdInTwoAppsIsTwoJobsEachDeliveredAndSeenOnlyByItsApp() async throws {
        try await WorkerHarness.with { harness in
            let mine = try await harness.importDevices(count: 3)
            let theirs = try await harness.importDevices(count: 2, prefix: "cafe", app: WorkerHarness.otherApp)
            let worker = try harness.startWorker()

            // The other app uses the ids first: a broadcast "order-42" and a small job "order-7", both finished.
            try await harness.publish(WorkerHarness.broadcast(id: "order-42", app: WorkerHarness.otherApp))
            try await harness.publish(
                Self.small("order-7", app: WorkerHarness.otherApp, token: theirs[0].token.hex))
            await harness.waitUntilFinished(["order-42", "order-7"], in: .done, app: WorkerHarness.otherApp)

            // This app's jobs with the same ids are its own: planned, sent and finished, not taken for duplicates.
            try await harness.publish(WorkerHarness.broadcast(id: "order-42"))
            try await harness.publish(Self.small("order-7", app: WorkerHarness.app, token: mine[0].token.hex))
            await harness.waitUntilFinished(["order-42", "order-7"], in: .done)
            try await worker.stop()

            #expect(Set(harness.received(job: "order-42", app: WorkerHarness.app)) == Set(mine.map(\.token.hex)))
            #expect(harness.received(job: "order-42", app: WorkerHarness.app).count == mine.count)
            #expect(Set(harness.received(job: "order-42", app: WorkerHarness.otherApp)) == Set(theirs.map(\.token.hex)))
            #expect(harness.received(job: "order-7", app: WorkerHarness.app) == [mine[0].token.hex])
            #expect(harness.received(job: "order-7", app: WorkerHarness.otherApp) == [theirs[0].token.hex])
            #expect(try await harness.job("order-42")?.counters == JobCounters(targeted: 3, sent: 3))
            #expect(
                try await harness.job("order-42", app: WorkerHarness.otherApp)?.counters
                    == JobCounters(targeted: 2, sent: 2))
        }
    }

    @Test func aBroadcastIdPublishedFiveTimesAtOnceReachesEachDeviceOnceWithTwoWorkers() async throws {
        try await WorkerHarness.with {
            $0.responseDelay = .milliseconds(1)
        } _: { harness in
            let devices = try await harness.importDevices(count: 2_000)
            let workers = [
                try harness.startWorker { $0.batchSize = 200 }, try harness.startWorker { $0.batchSize = 200 },
            ]
            // Back to back, once both workers consume: the copies are handed to both at once.
            for _ in 0..<5 { try await harness.publish(WorkerHarness.broadcast(id: "copies")) }
            #expect(await harness.waitUntilFinished("copies") == .done)
            // A graceful stop finishes every copy and batch in hand; nothing may be left in either queue, so every
            // notification a copy could cause has been sent by then.
            for worker in workers { try await worker.stop() }
            #expect(try await harness.publisher.queueMessageCount(harness.topology.jobs) == 0)
            #expect(try await harness.publisher.queueMessageCount(harness.topology.batches) == 0)

            let received = harness.received(job: "copies")
            #expect(received.count == devices.count)
            #expect(Set(received) == Set(devices.map(\.token.hex)))
            #expect(try await harness.job("copies")?.counters == JobCounters(targeted: 2_000, sent: 2_000))
        }
    }

    @Test func aBadgeIncrementCountsOncePerDeviceWhenItsBatchIsRetried() async throws {
        try await WorkerHarness.with {
            // Tokens starting f1a7 fail with 503 four times in all: their devices go to the retry queue once.
            $0.injectedFailures = [
                InjectedFailure(status: 503, reason: "ServiceUnavailable", tokenPrefix: "f1a7", times: 4)
            ]
        } _: { harness in
            let retried = try await harness.importDevices(count: 2, prefix: "f1a7")
            let plain = try await harness.importDevices(count: 3)
            let worker = try harness.startWorker()
            let notification = JobNotification(aps: ["alert": "x"], custom: ["job": "badge"], badgeIncrement: 1)
            try await harness.publish(WorkerHarness.broadcast(id: "badge", notification: notification))
            #expect(await harness.waitUntilFinished("badge") == .done)
            try await worker.stop()
            #expect(
                harness.events.events.contains(
                    .batchCompleted(BatchKey(app: WorkerHarness.app, job: "badge", seq: 0, attempt: 2))))

            var badges: [String: [Int]] = [:]
            for record in harness.simulator.records {
                let object = try JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any]
                badges[record.token, default: []].append((object?["aps"] as? [String: Any])?["badge"] as? Int ?? -1)
            }
            for device in retried + plain {
                #expect(badges[device.token.hex] == [1], "sent badges of \(device.token.hex.prefix(8))")
                #expect(try await harness.store.device(app: WorkerHarness.app, token: device.token)?.badge == 1)
            }
        }
    }

    @Test func aBatchMessagePublishedBeforeAppScopedIdsIsDeliveredWhenItsIdIsUnambiguous() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 2)
            // A job planned before the upgrade, one batch pending, and its batch message in the old form (no app).
            let job = try PreparedJob.prepare(Self.small("legacy", app: WorkerHarness.app, token: devices[0].token.hex))
            { "unused" }
            let spec = String(decoding: try JSONEncoder().encode(job.spec), as: UTF8.self)
            #expect(
                try await harness.store.register(job, spec: spec, publishedAt: nil)
                    == .plan(
                        cursor: nil, nextSeq: 0, planned: false))
            let key = BatchKey(app: WorkerHarness.app, job: "legacy", seq: 0, attempt: 1)
            try await harness.store.planSingleBatch(key, cursor: "1")
            let worker = try harness.startWorker()
            let legacy = #"{"job":"legacy","seq":0,"attempt":1,"tokens":["\#(devices[0].token.hex)"]}"#
            try await harness.publisher.publish(Array(legacy.utf8), routingKey: harness.topology.batches)
            #expect(await harness.waitUntilFinished("legacy") == .done)
            try await worker.stop()
            #expect(harness.events.events.contains(.batchCompleted(key)))
            #expect(harness.received(job: "legacy") == [devices[0].token.hex])
        }
    }

    static func small(_ id: String, app: String, token: String) -> Job {
        Job(
            id: id, app: app, target: .tokens([token]),
            notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string(id)]))
    }
}
