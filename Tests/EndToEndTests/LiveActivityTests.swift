import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Live Activities end to end (docs/live-activities.md): a worker, the simulator, real RabbitMQ and PostgreSQL.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct LiveActivityTests {
    static let type = "DeliveryAttributes"

    /// A Live Activity job: `event` with `content-state` `{"step": step}`, and `aps` extras.
    static func job(
        _ id: String, target: Target, event: String, step: Int, extra: [String: JSONValue] = [:],
        priority: Int? = nil, app: String = WorkerHarness.app
    ) -> Job {
        var aps: [String: JSONValue] = [
            "event": .string(event), "content-state": .object(["step": .integer(Int64(step))]),
        ]
        if event == "start" {
            aps["attributes-type"] = .string(type)
            aps["attributes"] = .object(["order": .string("o-1")])
            aps["alert"] = .object(["title": .string("Your order"), "body": .string("On its way")])
        }
        aps.merge(extra) { _, new in new }
        return Job(
            id: id, app: app, target: target,
            notification: JobNotification(pushType: "liveactivity", priority: priority, aps: aps))
    }

    /// The `aps` of a recorded notification.
    static func aps(_ payload: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return try #require(object?["aps"] as? [String: Any])
    }

    static func token(_ n: Int, prefix: String) -> DeviceToken { WorkerHarness.token(n, prefix: prefix) }

    /// Imports one device of the harness's app and registers an update token of it for each activity.
    static func oneDevice(
        withUpdateTokens tokens: [(activity: String, token: DeviceToken)],
        in harness: WorkerHarness
    ) async throws {
        let devices = try await harness.importDevices(count: 1)
        for (activity, token) in tokens {
            _ = try await harness.store.registerUpdateToken(
                app: WorkerHarness.app, activityID: activity, device: devices[0].token, token: token, registeredBy: nil)
        }
    }

    @Test func startUpdateWithRotationAndEndWithDismissal() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 2)
            let store = harness.store
            let startToken = Self.token(1, prefix: "5a")
            _ = try await store.registerStartToken(
                app: WorkerHarness.app, device: devices[0].token, activityType: Self.type, token: startToken,
                registeredBy: nil)
            let worker = try harness.startWorker()

            // Push-to-start to a device: its push-to-start token for the type, at 10, with dates set by Herald.
            try await harness.publish(
                Self.job(
                    "start", target: .tokens([devices[0].token.hex, devices[1].token.hex]), event: "start", step: 0))
            #expect(await harness.waitUntilFinished("start") == .done)
            var records = harness.simulator.records
            try #require(records.count == 1)
            #expect(records[0].token == startToken.hex)
            #expect(records[0].pushType == "liveactivity")
            #expect(records[0].topic == WorkerHarness.app + ".push-type.liveactivity")
            #expect(records[0].priority == 10)
            let started = try Self.aps(records[0].payload)
            let timestamp = try #require(started["timestamp"] as? Int)
            #expect(started["stale-date"] as? Int == timestamp + LiveActivitySettings.defaultStaleAfterSeconds)
            #expect(try await harness.job("start")?.counters.sent == 1)

            // The app registers the activity's update token; an update without an alert goes at 5.
            let first = Self.token(2, prefix: "0a")
            _ = try await store.registerUpdateToken(
                app: WorkerHarness.app, activityID: "order-1", device: devices[0].token, token: first, registeredBy: nil
            )
            try await harness.publish(Self.job("update-1", target: .activity("order-1"), event: "update", step: 1))
            #expect(await harness.waitUntilFinished("update-1") == .done)
            records = harness.simulator.records
            try #require(records.count == 2)
            #expect(records[1].token == first.hex && records[1].priority == 5)

            // The token rotates: the next update goes to the new one only.
            let second = Self.token(3, prefix: "0a")
            let rotation = try await store.registerUpdateToken(
                app: WorkerHarness.app, activityID: "order-1", device: devices[0].token, token: second,
                registeredBy: nil)
            #expect(rotation.replaced)
            try await harness.publish(Self.job("update-2", target: .activity("order-1"), event: "update", step: 2))
            #expect(await harness.waitUntilFinished("update-2") == .done)
            records = harness.simulator.records
            try #require(records.count == 3)
            #expect(records[2].token == second.hex)
            #expect(try Self.aps(records[2].payload)["content-state"] as? [String: Int] == ["step": 2])

            // The end carries a dismissal date, and the activity's update tokens leave the registry.
            try await harness.publish(Self.job("end", target: .activity("order-1"), event: "end", step: 3))
            #expect(await harness.waitUntilFinished("end") == .done)
            records = harness.simulator.records
            try #require(records.count == 4)
            #expect(records[3].token == second.hex)
            let ended = try Self.aps(records[3].payload)
            let endStamp = try #require(ended["timestamp"] as? Int)
            #expect(ended["event"] as? String == "end")
            #expect(ended["dismissal-date"] as? Int == endStamp + LiveActivitySettings.defaultDismissAfterSeconds)
            #expect(
                try await store.updateTokens(app: WorkerHarness.app, activityID: "order-1", limit: 10).entries.isEmpty)

            // An update after the end has no token left: done, nothing sent.
            try await harness.publish(Self.job("late", target: .activity("order-1"), event: "update", step: 4))
            #expect(await harness.waitUntilFinished("late") == .done)
            #expect(harness.simulator.records.count == 4)
            try await worker.stop()
        }
    }

    @Test func anAppServingBothEnvironmentsIsRefusedRatherThanSentToTheWrongOne() async throws {
        try await WorkerHarness.with { harness in
            try await Self.oneDevice(withUpdateTokens: [("trip", Self.token(1, prefix: "0e"))], in: harness)
            let worker = try harness.startWorker { $0.apps.apps[0].environments = [.sandbox, .production] }
            try await harness.publish(Self.job("both", target: .activity("trip"), event: "update", step: 1))
            _ = await harness.events.wait { events in
                events.contains {
                    if case .parked(_, let reason) = $0 { reason.contains("both environments") } else { false }
                }
            }
            #expect(try await harness.job("both")?.state == .failed)
            #expect(harness.simulator.records.isEmpty)
            // The token is not touched: nothing was sent, nothing pruned.
            #expect(
                try await harness.store.updateTokens(app: WorkerHarness.app, activityID: "trip", limit: 10).entries
                    .count == 1)
            try await worker.stop()
        }
    }

    @Test func goneUpdateTokenIsPruned() async throws {
        let dead = Self.token(7, prefix: "dead")
        try await WorkerHarness.with {
            $0.deadTokens = [dead.hex]
        } _: { harness in
            try await Self.oneDevice(withUpdateTokens: [("ride-9", dead)], in: harness)
            // The app's events, to see how the pruned token is reported.
            try await harness.topology.declare(on: harness.publisher)
            let queue = TestServices.uniqueName("events")
            _ = try await harness.publisher.declareQueue(queue, durable: false, exclusive: true)
            try await harness.publisher.bindQueue(queue, to: harness.topology.events, routingKey: "token.pruned.#")
            let worker = try harness.startWorker { $0.apps.apps[0].events = true }
            try await harness.publish(Self.job("update", target: .activity("ride-9"), event: "update", step: 1))
            #expect(await harness.waitUntilFinished("update") == .done)
            let status = try #require(try await harness.job("update"))
            #expect(status.counters.pruned == 1 && status.counters.sent == 0)
            #expect(
                try await harness.store.updateTokens(app: WorkerHarness.app, activityID: "ride-9", limit: 10).entries
                    .isEmpty)
            let pruned = try await harness.store.deadTokens(app: WorkerHarness.app)
            #expect(pruned.map(\.token) == [dead])
            // Reported as an update token of its activity, not as a dead device; the device stays.
            let consumer = try await harness.publisher.consume(queue: queue, prefetch: 1)
            for try await delivery in consumer {
                let body = try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any]
                let entries = try #require(body?["tokens"] as? [[String: String]])
                #expect(
                    entries == [
                        [
                            "token": dead.hex, "reason": "Unregistered", "platform": "ios", "kind": "update",
                            "activity": "ride-9",
                        ]
                    ])
                try await consumer.ack(delivery)
                break
            }
            #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 1)
            try await worker.stop()
        }
    }

    @Test func budgetChoosesTenThenFive() async throws {
        try await WorkerHarness.with { harness in
            try await Self.oneDevice(
                withUpdateTokens: [("match", Self.token(1, prefix: "0b")), ("quiet", Self.token(2, prefix: "0b"))],
                in: harness)
            let worker = try harness.startWorker {
                $0.apps.apps[0].liveActivities = LiveActivitySettings(priorityBudgetPerHour: 2)
            }
            // Alerting updates ask for 10: the first two get it, the third is sent at 5.
            let alert: [String: JSONValue] = ["alert": .object(["title": .string("Goal")])]
            for n in 1...3 {
                try await harness.publish(
                    Self.job("goal-\(n)", target: .activity("match"), event: "update", step: n, extra: alert))
                #expect(await harness.waitUntilFinished("goal-\(n)") == .done)
            }
            // An update without an alert goes at 5 without touching the budget; another activity has its own.
            try await harness.publish(
                Self.job("quiet-1", target: .activity("quiet"), event: "update", step: 1, extra: alert))
            #expect(await harness.waitUntilFinished("quiet-1") == .done)
            let priorities = harness.simulator.records.map(\.priority)
            #expect(priorities == [10, 10, 5, 10])
            try await worker.stop()
        }
    }

    @Test func frequentUpdatesAskForTen() async throws {
        try await WorkerHarness.with { harness in
            try await Self.oneDevice(withUpdateTokens: [("score", Self.token(1, prefix: "0c"))], in: harness)
            let worker = try harness.startWorker {
                $0.apps.apps[0].liveActivities = LiveActivitySettings(frequentUpdates: true, priorityBudgetPerHour: 1)
            }
            for n in 1...2 {
                try await harness.publish(Self.job("score-\(n)", target: .activity("score"), event: "update", step: n))
                #expect(await harness.waitUntilFinished("score-\(n)") == .done)
            }
            #expect(harness.simulator.records.map(\.priority) == [10, 5])
            try await worker.stop()
        }
    }

    @Test func supersededUpdatesAreNotSent() async throws {
        try await WorkerHarness.with {
            // The first send is answered 503 once: it stays in hand while the burst behind it arrives.
            $0.injectedFailures = [InjectedFailure(status: 503, reason: "ServiceUnavailable", every: 1, times: 1)]
        } _: { harness in
            let token = Self.token(1, prefix: "0d")
            try await Self.oneDevice(withUpdateTokens: [("delivery", token)], in: harness)
            // A burst of ten updates waits in the broker before the worker starts.
            let ids = (1...10).map { "step-\($0)" }
            for (n, id) in ids.enumerated() {
                try await harness.publish(Self.job(id, target: .activity("delivery"), event: "update", step: n + 1))
            }
            let worker = try harness.startWorker()
            _ = await harness.events.wait { events in
                Set(events.compactMap { if case .finished(_, let id, _) = $0 { id } else { nil } }).isSuperset(of: ids)
            }
            let states = try await ids.asyncMap { try await harness.job($0)?.state }
            let cancelled = states.filter { $0 == .cancelled }.count
            let sent = harness.simulator.records.filter { $0.token == token.hex }
            // Only the newest content-state is sure to go; every job ends, sent or superseded.
            #expect(cancelled >= 1)
            #expect(states.allSatisfy { $0 == .done || $0 == .cancelled })
            #expect(sent.count + cancelled == ids.count)
            #expect(try Self.aps(try #require(sent.last).payload)["content-state"] as? [String: Int] == ["step": 10])
            #expect(states.last == .done)

            // An event older than one already sent (its own timestamp) is superseded, not sent.
            let stamp: [String: JSONValue] = ["timestamp": .integer(1_000)]
            try await harness.publish(
                Self.job("old", target: .activity("delivery"), event: "update", step: 0, extra: stamp))
            #expect(await harness.waitUntilFinished("old") == .cancelled)
            #expect(try await harness.job("old")?.error?.contains("superseded") == true)
            #expect(harness.simulator.records.filter { $0.token == token.hex }.count == sent.count)
            try await worker.stop()
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// Broadcasts to Live Activity channels: one request per job, Apple's rules checked before it, each of APNs'
/// refusals ending the job with its reason.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct LiveActivityBroadcastTests {
    static func update(
        _ id: String, channel: String, step: Int, expiration: Int64? = nil, app: String = WorkerHarness.app
    )
        -> Job
    {
        var job = LiveActivityTests.job(id, target: .channel(channel), event: "update", step: step, app: app)
        job.notification.expiration = expiration
        return job
    }

    @Test func broadcastsWithEachStoragePolicyAndEachRefusal() async throws {
        try await WorkerHarness.with {
            $0.broadcastDisabledBundles = [WorkerHarness.otherApp]
        } _: { harness in
            let simulator = harness.simulator
            // Channels as `herald channels create` leaves them: at Apple (the simulator) and recorded.
            func channel(_ policy: Int, app: String = WorkerHarness.app, atApple: Bool = true) async throws -> String {
                let id =
                    atApple
                    ? simulator.addChannel(bundleID: app, messageStoragePolicy: policy).id
                    : Data((0..<16).map { UInt8($0) }).base64EncodedString()
                _ = try await harness.store.recordChannel(
                    ActivityChannel(app: app, id: id, environment: "sandbox", storagePolicy: policy))
                return id
            }
            let noStorage = try await channel(0)
            let mostRecent = try await channel(1)
            let unknownAtApple = try await channel(1, atApple: false)
            let disabled = try await channel(1, app: WorkerHarness.otherApp, atApple: false)
            // An id APNs cannot read (not base64), as a hand-edited record could hold.
            let malformed = "not base64!"
            _ = try await harness.store.recordChannel(
                ActivityChannel(app: WorkerHarness.app, id: malformed, environment: "sandbox", storagePolicy: 1))
            let endpoint = "https://127.0.0.1:\(harness.port)"
            let worker = try harness.startWorker {
                for index in $0.apps.apps.indices {
                    $0.apps.apps[index].liveActivities = LiveActivitySettings(
                        channelsEndpoint: endpoint, broadcastEndpoint: endpoint)
                }
            }

            // Policy 0: Herald sets apns-expiration 0. Policy 1: no expiration, as the job gives none.
            try await harness.publish(Self.update("zero", channel: noStorage, step: 1))
            try await harness.publish(Self.update("one", channel: mostRecent, step: 1))
            await harness.waitUntilFinished(["zero", "one"], in: .done)
            let broadcasts = simulator.broadcasts
            try #require(broadcasts.count == 2)
            let zero = try #require(broadcasts.first { $0.channelID == noStorage })
            let one = try #require(broadcasts.first { $0.channelID == mostRecent })
            #expect(zero.expiration == 0 && one.expiration == nil)
            #expect(zero.pushType == "liveactivity" && zero.priority == 5)
            #expect(try LiveActivityTests.aps(one.payload)["content-state"] as? [String: Int] == ["step": 1])
            let sent = try #require(try await harness.job("zero"))
            #expect(sent.counters.targeted == 1 && sent.counters.sent == 1)

            // Refused before any request: a channel Herald has no record of, an expiration a policy-0 channel
            // cannot take.
            try await harness.publish(Self.update("unrecorded", channel: "bm90LXJlY29yZGVk", step: 2))
            try await harness.publish(Self.update("expiring", channel: noStorage, step: 2, expiration: 4_000_000_000))
            // Refused by APNs: a channel it does not know (the record goes too), an app without the feature.
            try await harness.publish(Self.update("gone", channel: unknownAtApple, step: 2))
            try await harness.publish(Self.update("disabled", channel: disabled, step: 2, app: WorkerHarness.otherApp))
            // Refused before Apple is asked: an id that is not base64 (a hand-edited record, a producer's typo) is
            // parked with its rule at intake (issue 32: it was forwarded and answered BadChannelId).
            try await harness.publish(Self.update("malformed", channel: malformed, step: 2))
            _ = await harness.events.wait { events in
                events.contains { if case .parked = $0 { true } else { false } }
            }
            #expect(harness.parkedReasons.contains { $0.contains("target.channel is not a channel id") })
            #expect(try await harness.job("malformed") == nil)
            for id in ["unrecorded", "expiring", "gone"] {
                #expect(await harness.waitUntilFinished(id) == .failed)
            }
            #expect(await harness.waitUntilFinished("disabled", app: WorkerHarness.otherApp) == .failed)
            #expect(try await harness.job("unrecorded")?.error?.hasPrefix("ChannelNotRegistered") == true)
            #expect(try await harness.job("expiring")?.error?.hasPrefix("BadExpirationDate") == true)
            #expect(try await harness.job("gone")?.error?.hasPrefix("ChannelNotRegistered") == true)
            #expect(try await harness.store.channel(app: WorkerHarness.app, id: unknownAtApple) == nil)
            let refused = try await harness.job("disabled", app: WorkerHarness.otherApp)
            #expect(refused?.error?.hasPrefix("FeatureNotEnabled") == true)
            #expect(simulator.broadcasts.count == 2)
            try await worker.stop()
        }
    }

    /// One provider token per key per process (Apple's rule): the device sends and the broadcast client of a
    /// worker each kept a cache, so the simulator saw two tokens. The broadcast carries its job's
    /// `apns-request-id`, the same on every try.
    @Test func deviceSendsAndABroadcastShareOneProviderTokenAndTheBroadcastNamesItsRequest() async throws {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 2)
            let id = harness.simulator.addChannel(bundleID: WorkerHarness.app, messageStoragePolicy: 1).id
            _ = try await harness.store.recordChannel(
                ActivityChannel(app: WorkerHarness.app, id: id, environment: "sandbox", storagePolicy: 1))
            let worker = try harness.startWorker()
            try await harness.publish(WorkerHarness.broadcast(id: "devices"))
            try await harness.publish(Self.update("channel", channel: id, step: 1))
            await harness.waitUntilFinished(["devices", "channel"], in: .done)
            try await worker.stop()
            #expect(harness.received(job: "devices").count == devices.count)
            let broadcast = try #require(harness.simulator.broadcasts.first)
            let expected = NotificationID(app: WorkerHarness.app, job: "channel").id(forChannel: id)
            #expect(broadcast.requestID == expected.description)
            #expect(harness.simulator.providerTokensSeen == 1)
        }
    }

    @Test func oversizedBroadcastPayloadIsParked() async throws {
        try await WorkerHarness.with { harness in
            let id = harness.simulator.addChannel(bundleID: WorkerHarness.app, messageStoragePolicy: 1).id
            _ = try await harness.store.recordChannel(
                ActivityChannel(app: WorkerHarness.app, id: id, environment: "sandbox", storagePolicy: 1))
            let worker = try harness.startWorker()
            // 4,500 bytes fit a broadcast (5,120), not a send to a device (4,096); 6,000 fit neither.
            var fits = Self.update("fits", channel: id, step: 1)
            fits.notification.custom = ["pad": .string(String(repeating: "x", count: 4_500))]
            var over = Self.update("over", channel: id, step: 1)
            over.notification.custom = ["pad": .string(String(repeating: "x", count: 6_000))]
            try await harness.publish(over)
            try await harness.publish(fits)
            #expect(await harness.waitUntilFinished("fits") == .done)
            #expect(harness.simulator.broadcasts.map(\.channelID) == [id])
            // Refused at intake (its id is not read from a message that breaks a rule).
            _ = await harness.events.wait { events in
                events.contains { if case .parked(_, let reason) = $0 { reason.contains("5120") } else { false } }
            }
            #expect(harness.parkedReasons.count == 1)
            try await worker.stop()
        }
    }
}
