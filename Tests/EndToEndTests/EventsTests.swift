import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import RabbitMQ
import Testing

/// Events out (`herald.events`, schemas/018): for the apps that have them, one event per job that finishes, fails or
/// is cancelled, and the pruned tokens, published once by whichever worker's relay takes them.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct EventsTests {
    @Test func finishedFailedAndPrunedEventsComeOnceEachFromTwoWorkers() async throws {
        try await WorkerHarness.with {
            $0.deadTokenPrefixes = ["dead"]
            // The other app's topic is refused as a whole: its job fails.
            $0.topics = [WorkerHarness.app]
        } _: { harness in
            let live = try await harness.importDevices(count: 250)
            let dead = try await harness.importDevices(count: 5, prefix: "dead")
            _ = try await harness.importDevices(count: 3, prefix: "cafe", app: WorkerHarness.otherApp)
            // A queue of the test's own, bound to every event of the exchange.
            try await harness.topology.declare(on: harness.publisher)
            let queue = TestServices.uniqueName("events")
            _ = try await harness.publisher.declareQueue(queue, durable: false, exclusive: true)
            try await harness.publisher.bindQueue(queue, to: harness.topology.events, routingKey: "#")
            // Two workers, with events for both apps; a third app would have none.
            let workers = try (0..<2).map { _ in
                try harness.startWorker {
                    $0.batchSize = 100
                    for index in $0.apps.apps.indices { $0.apps.apps[index].events = true }
                }
            }
            try await harness.publish(WorkerHarness.broadcast(id: "broadcast"))
            let singles = (0..<10).map { "single-\($0)" }
            for (index, id) in singles.enumerated() {
                try await harness.publish(SmallJobTests.job(id, tokens: [live[index].token.hex]))
            }
            try await harness.publish(WorkerHarness.broadcast(id: "refused", app: WorkerHarness.otherApp))
            await harness.waitUntilFinished(Set(singles + ["broadcast"]), in: .done)
            #expect(await harness.waitUntilFinished("refused", app: WorkerHarness.otherApp) == .failed)

            // Every job is final and its events are written; once the relay has emptied the outbox (it deletes an event
            // after its confirm) every event is in the queue, and nothing more comes.
            while try await harness.outboxCount() > 0 { await Task.yield() }
            let count = Int(try await harness.publisher.queueMessageCount(queue))
            // 12 job events and the pruned tokens (one event per write that pruned some).
            try #require(count > singles.count + 2)
            let consumer = try await harness.publisher.consume(queue: queue, prefetch: 100)
            var events: [(key: String, messageID: String?, body: [String: Any])] = []
            var jobEvents: [String: Int] = [:]
            var pruned: [String] = []
            for try await delivery in consumer {
                let body = try #require(try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any])
                events.append((delivery.routingKey, delivery.properties.messageID, body))
                if delivery.routingKey.hasPrefix("job.") {
                    jobEvents[body["job"] as? String ?? "?", default: 0] += 1
                } else {
                    let tokens = body["tokens"] as? [[String: Any]] ?? []
                    pruned += tokens.compactMap { $0["token"] as? String }
                }
                try await consumer.ack(delivery)
                if events.count == count { break }
            }

            // One job event per job, with its state and counters, and each pruned token once.
            #expect(jobEvents.values.allSatisfy { $0 == 1 })
            #expect(Set(jobEvents.keys) == Set(singles + ["broadcast", "refused"]))
            let broadcast = try #require(
                events.first {
                    $0.key == "job.finished.\(WorkerHarness.app)" && $0.body["job"] as? String == "broadcast"
                })
            #expect(broadcast.body["state"] as? String == "done")
            #expect(broadcast.body["targeted"] as? Int == live.count + dead.count)
            #expect(broadcast.body["sent"] as? Int == live.count)
            #expect(broadcast.body["pruned"] as? Int == dead.count)
            let refused = try #require(events.first { $0.key == "job.failed.\(WorkerHarness.otherApp)" })
            #expect(refused.body["job"] as? String == "refused")
            #expect((refused.body["error"] as? String)?.isEmpty == false)
            #expect(pruned.sorted() == dead.map(\.token.hex).sorted())
            #expect(
                events.allSatisfy { $0.key.hasPrefix("token.pruned.\(WorkerHarness.app)") || $0.key.hasPrefix("job.") })
            // A message id per event, never repeated.
            let ids = events.compactMap(\.messageID)
            #expect(ids.count == events.count && Set(ids).count == ids.count)
            for worker in workers { try await worker.stop() }
        }
    }
}

extension WorkerHarness {
    /// Events written and not yet published.
    func outboxCount() async throws -> Int {
        let rows = try await store.client.query("SELECT count(*)::int FROM event_outbox", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
