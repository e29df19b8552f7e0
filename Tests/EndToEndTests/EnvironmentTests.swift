import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// A device is sent to the APNs environment it registered with, when its app serves both: sandbox tokens never
/// reach production (where they would answer BadDeviceToken and be pruned), nor production tokens the sandbox.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct EnvironmentTests {
    @Test func eachDeviceGoesToTheEnvironmentItRegisteredWith() async throws {
        try await WorkerHarness.with { harness in
            // The harness's simulator stands for the sandbox (the app's default); a second one for production.
            let (production, productionPort) = try await TestAPNs.startSimulator()
            do {
                try await Self.check(harness, production: production, port: productionPort)
            } catch {
                try? await production.stop()
                throw error
            }
            try await production.stop()
        }
    }

    static func check(_ harness: WorkerHarness, production: APNSSimulator, port productionPort: Int) async throws {
        var apps = harness.apps
        let index = try #require(apps.apps.firstIndex { $0.id == WorkerHarness.app })
        apps.apps[index].environments = [.sandbox, .production]
        apps.apps[index].endpoints = ["production": "https://127.0.0.1:\(productionPort)"]

        // Imported devices carry no environment: the app's default. Registered ones carry theirs.
        let unspecified = try await harness.importDevices(count: 30, prefix: "aaaa").map(\.token)
        var sandbox: [DeviceToken] = []
        var live: [DeviceToken] = []
        for n in 0..<20 {
            let token = WorkerHarness.token(n, prefix: "5a4d")
            _ = try await harness.store.register(
                DeviceRegistration(token: token, environment: .set("sandbox")), app: WorkerHarness.app)
            sandbox.append(token)
            let other = WorkerHarness.token(n, prefix: "9d0d")
            _ = try await harness.store.register(
                DeviceRegistration(token: other, environment: .set("production")), app: WorkerHarness.app)
            live.append(other)
        }

        let worker = try harness.startWorker { $0.apps = apps }
        // A broadcast, and a job of explicit tokens from both environments (with one no device registered).
        try await harness.publish(WorkerHarness.broadcast(id: "everyone"))
        let unknown = WorkerHarness.token(1, prefix: "0bad")
        let listed = [sandbox[0], live[0], live[1], unknown]
        try await harness.publish(
            Job(
                id: "listed", app: WorkerHarness.app, target: .tokens(listed.map(\.hex)),
                notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string("listed")])))
        #expect(await harness.waitUntilFinished("everyone") == .done)
        #expect(await harness.waitUntilFinished("listed") == .done)
        try await worker.stop()

        func tokens(_ simulator: APNSSimulator, job: String) -> [String] {
            simulator.records.filter { $0.payload.contains(#""job":"\#(job)""#) }.map(\.token).sorted()
        }
        #expect(tokens(harness.simulator, job: "everyone") == (unspecified + sandbox).map(\.hex).sorted())
        #expect(tokens(production, job: "everyone") == live.map(\.hex).sorted())
        // A listed token no device registered goes to the app's default environment.
        #expect(tokens(harness.simulator, job: "listed") == [sandbox[0], unknown].map(\.hex).sorted())
        #expect(tokens(production, job: "listed") == [live[0], live[1]].map(\.hex).sorted())
        let counters = try #require(try await harness.job("everyone")?.counters)
        #expect(counters.sent == unspecified.count + sandbox.count + live.count)
        #expect(counters.pruned == 0)
    }
}
