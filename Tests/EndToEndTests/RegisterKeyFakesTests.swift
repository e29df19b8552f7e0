import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import Testing

/// Issue 32's made-up tokens: a register-only key (anyone's, since apps embed it) registers fake tokens that sort
/// first and that APNs answers BadDeviceToken. Before, the prune breaker took them as a misconfigured app: every
/// broadcast stopped before reaching a real device, and no fake was ever pruned. Now only evidence a register key
/// cannot forge counts: the fakes (registered by a register key, never delivered to) are pruned, the job reaches
/// every real device, and the real devices of register keys are recorded as delivered to (evidence from then on).
@Suite(.needsServices, .timeLimit(.minutes(5))) struct RegisterKeyFakesTests {
    /// Registers `count` devices `<prefix><n>` on topic `news` as the register-only key `key` would.
    static func registerAsAnApp(_ harness: WorkerHarness, count: Int, prefix: String, key: Int64) async throws
        -> [DeviceToken]
    {
        var tokens: [DeviceToken] = []
        for n in 0..<count {
            var registration = DeviceRegistration(
                token: WorkerHarness.token(n, prefix: prefix), topics: .set(["news"]))
            registration.registeredBy = key
            _ = try await harness.store.register(registration, app: WorkerHarness.app)
            tokens.append(registration.token)
        }
        return tokens
    }

    @Test func fakeTokensOfARegisterKeyArePrunedAndDoNotStopABroadcast() async throws {
        try await WorkerHarness.with {
            $0.badTokenPrefixes = ["0000"]
        } _: { harness in
            let key = try await harness.store.createAPIKey(
                app: WorkerHarness.app, hash: String(repeating: "e", count: 64), prefix: "hk_test", label: nil,
                scopes: [.register])
            // 250 fakes sorting first (more than two batches of 100: the breaker trips on any one of them alone,
            // before), then real devices: imported by the backend, and registered by apps with the same key.
            let fakes = try await Self.registerAsAnApp(harness, count: 250, prefix: "0000", key: key)
            let imported = try await harness.importDevices(count: 150, prefix: "beef") { _, token in
                DeviceRecord(token: token, topics: ["news"])
            }
            let fromApps = try await Self.registerAsAnApp(harness, count: 100, prefix: "cafe", key: key)
            let worker = try harness.startWorker { $0.batchSize = 100 }

            let topic = Job(
                id: "news-after-fakes", app: WorkerHarness.app, target: .topic("news"),
                notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string("news-after-fakes")]))
            try await harness.publish(topic)
            #expect(await harness.waitUntilFinished("news-after-fakes") == .done)

            let status = try #require(try await harness.job("news-after-fakes"))
            #expect(status.error == nil)
            #expect(status.counters.sent == 250)
            #expect(status.counters.pruned == 250)
            #expect(
                !harness.events.events.contains(.pruneBreakerTripped(app: WorkerHarness.app, id: "news-after-fakes")))
            let reached = Set(harness.received(job: "news-after-fakes"))
            let real = Set(imported.map(\.token.hex) + fromApps.map(\.hex))
            #expect(reached.count == 250 && real.subtracting(reached).isEmpty)
            // Every fake pruned (and restorable as any prune), no real device touched.
            #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 250)
            let dead = try await harness.store.deadTokens(app: WorkerHarness.app)
            #expect(Set(dead.map { $0.token }) == Set(fakes))
            #expect(dead.allSatisfy { $0.reason == "BadDeviceToken" })
            // The apps' real devices are delivered to now: evidence from here on.
            #expect(try await harness.store.unprovenDevices(app: WorkerHarness.app, tokens: fromApps).isEmpty)

            // The next broadcast, to every device, finds no fake left and reaches all.
            try await harness.publish(WorkerHarness.broadcast(id: "all-after-fakes"))
            #expect(await harness.waitUntilFinished("all-after-fakes") == .done)
            #expect(Set(harness.received(job: "all-after-fakes")).count == 250)
            try await worker.stop()
        }
    }

    @Test func backendDevicesAnsweredBadDeviceTokenStillTripTheBreakerBesideFakes() async throws {
        try await WorkerHarness.with {
            $0.badTokenPrefixes = ["0000", "bad0"]
        } _: { harness in
            // A misconfigured app (its own devices answered BadDeviceToken), with a register key's fakes beside
            // them: the breaker judges from the backend's devices, stops the job, and prunes none of those.
            let key = try await harness.store.createAPIKey(
                app: WorkerHarness.app, hash: String(repeating: "f", count: 64), prefix: "hk_test", label: nil,
                scopes: [.register])
            _ = try await Self.registerAsAnApp(harness, count: 50, prefix: "0000", key: key)
            try await harness.importDevices(count: 200, prefix: "bad0")
            let worker = try harness.startWorker { $0.batchSize = 100 }
            try await harness.publish(WorkerHarness.broadcast(id: "misconfigured"))
            #expect(await harness.waitUntilFinished("misconfigured") == .failed)
            let status = try #require(try await harness.job("misconfigured"))
            #expect(status.error?.contains("misconfigured") == true)
            #expect(harness.events.events.contains(.pruneBreakerTripped(app: WorkerHarness.app, id: "misconfigured")))
            // No backend device pruned.
            let dead = try await harness.store.deadTokens(app: WorkerHarness.app)
            #expect(!dead.contains { $0.token.hex.hasPrefix("bad0") })
            try await worker.stop()
        }
    }
}
