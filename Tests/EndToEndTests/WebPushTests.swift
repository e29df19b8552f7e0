import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import NIOPosix
import Testing
import WebPushCore
import WebPushSimulator

/// Browsers' push subscriptions, end to end: real RabbitMQ and PostgreSQL, the Web Push simulator (which keeps each
/// test subscription's private key, decrypts what it receives and verifies VAPID), one worker built as
/// `herald worker` builds it.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct WebPushTests {
    static let subject = "mailto:push@news.example"

    /// Starts a Web Push simulator that takes the app's VAPID key only, writes the key beside the harness's apps
    /// file, and gives every app of the harness a `webpush` block.
    static func withWebPush(
        _ harness: WorkerHarness, simulator configure: (inout WebPushSimulatorConfiguration) -> Void = { _ in },
        _ body: (WebPushSimulator, AppsFile, VAPIDKey) async throws -> Void
    ) async throws {
        let key = VAPIDKey.generate()
        var configuration = WebPushSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM)
        configuration.vapidPublicKeys = [key.applicationServerKey]
        configure(&configuration)
        var logger = Logger(label: "webpush-sim")
        logger.logLevel = .warning
        let simulator = WebPushSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        _ = try await simulator.start()
        try key.pem.write(toFile: harness.appsDirectory + "/vapid.pem", atomically: true, encoding: .utf8)
        var apps = harness.apps
        for index in apps.apps.indices {
            apps.apps[index].webpush = .init(
                vapidPrivateKeyFile: "vapid.pem", subject: Self.subject, caFile: "ca.pem")
        }
        do {
            try await body(simulator, apps, key)
        } catch {
            try? await simulator.stop()
            throw error
        }
        try await simulator.stop()
    }

    /// A subscription the simulator made (bound to `key`), as a device of `user`.
    static func device(
        _ simulator: WebPushSimulator, key: VAPIDKey, id: String, user: String?, locale: String? = nil,
        topics: [String] = [], expirationTime: Int64? = nil
    ) throws -> DeviceRecord {
        let made = simulator.makeSubscription(id: id, applicationServerKey: key.applicationServerKey)
        return DeviceRecord(
            webSubscription: try WebPushSubscription(
                endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth, expirationTime: expirationTime),
            userID: user, locale: locale, topics: topics)
    }

    /// The decrypted payloads the simulator took for job `id` (its `data.job`), by subscription id.
    static func received(_ simulator: WebPushSimulator, job id: String) -> [(id: String, payload: [String: Any])] {
        simulator.records.compactMap { record in
            guard let plaintext = record.plaintext,
                let object = try? JSONSerialization.jsonObject(with: Data(plaintext)) as? [String: Any],
                let data = object["data"] as? [String: Any], data["job"] as? String == id
            else { return nil }
            return (record.subscriptionID, object)
        }
    }

    @Test func jobsReachEachSubscriptionOnceDecryptedAndSignedAndTheDeadArePruned() async throws {
        try await WorkerHarness.with { harness in
            try await Self.withWebPush(harness) { simulator, apps, key in
                var devices: [DeviceRecord] = []
                for i in 0..<12 {
                    devices.append(
                        try Self.device(
                            simulator, key: key, id: "s\(i)", user: "user-\(i % 4)", locale: i % 2 == 0 ? "fr" : "en",
                            topics: i % 3 == 0 ? ["sports"] : []))
                }
                // Unsubscribed (410), and one whose expirationTime has passed (never sent to).
                devices.append(try Self.device(simulator, key: key, id: "gone", user: "user-0"))
                simulator.unsubscribe(id: "gone")
                devices.append(
                    try Self.device(simulator, key: key, id: "expired", user: "user-1", expirationTime: 1_000))
                // An iPhone of the same user: one job reaches both.
                let iphone = DeviceRecord(token: WorkerHarness.token(1), userID: "user-0", locale: "fr", topics: [])
                _ = try await harness.store.importDevices(devices + [iphone], app: WorkerHarness.app)
                let worker = try harness.startWorker { $0.apps = apps }

                let live = Array(devices.prefix(12))
                let jobs: [(String, Target, [String])] = [
                    ("tokens", .tokens([devices[2].token.hex, devices[5].token.hex]), ["s2", "s5"]),
                    (
                        "users", .users(["user-0", "user-1"]),
                        live.enumerated().filter { $0.offset % 4 < 2 }.map { "s\($0.offset)" }
                    ),
                    (
                        "topic", .topic("sports"),
                        live.enumerated().filter { $0.offset % 3 == 0 }.map { "s\($0.offset)" }
                    ),
                    ("all", .platforms(.all, [.web]), live.indices.map { "s\($0)" }),
                ]
                for (id, target, _) in jobs {
                    try await harness.publish(
                        Job(
                            id: id, app: WorkerHarness.app, target: target,
                            notification: JobNotification(
                                priority: 5, expiration: Int64(Date().timeIntervalSince1970) + 3600,
                                collapseID: "match-42",
                                aps: ["alert": ["title": "Goal", "body": .string("from \(id)")]],
                                custom: ["job": .string(id), "n": .integer(7)],
                                localizations: ["fr": ["title": "But", "body": .string("de \(id)")]])))
                }
                await harness.waitUntilFinished(Set(jobs.map(\.0)), in: .done)
                for (id, _, expected) in jobs {
                    let got = Self.received(simulator, job: id)
                    #expect(got.map(\.id).sorted() == expected.sorted(), "job \(id): each subscription once")
                    for (subscription, payload) in got {
                        let french = (Int(subscription.dropFirst()) ?? 1) % 2 == 0
                        #expect(payload["title"] as? String == (french ? "But" : "Goal"))
                        #expect(payload["tag"] as? String == "match-42")
                        #expect((payload["data"] as? [String: Any])?["n"] as? Int == 7)
                    }
                }
                #expect(harness.received(job: "users") == [WorkerHarness.token(1).hex], "the iPhone too")
                #expect(simulator.undecryptableCount == 0)
                for record in simulator.records {
                    #expect(record.urgency == "normal")
                    #expect(record.topic == "match-42")
                    #expect((3000...3600).contains(record.ttl))
                    #expect(record.vapidSubject == Self.subject)
                    #expect(record.vapidPublicKey == key.applicationServerKey)
                }
                #expect(simulator.distinctVAPIDTokens(audience: simulator.origin) == 1, "one VAPID token per origin")

                // The unsubscribed one was refused and pruned; the expired one pruned unsent; both reported.
                #expect(!simulator.requests.contains { $0.subscriptionID == "expired" })
                let dead = try await harness.store.deadTokens(app: WorkerHarness.app)
                #expect(Set(dead.map(\.token.hex)) == Set([devices[12].token.hex, devices[13].token.hex]))
                #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == 13)
                // The users job reached its six live subscriptions and the iPhone; the two dead ones are pruned once,
                // by whichever job met them first (another counts them failed, "already pruned").
                let status = try #require(try await harness.job("users"))
                #expect(status.counters.sent == 7 && status.counters.pruned + status.counters.failed == 2)
                var pruned = 0
                for (id, _, _) in jobs { pruned += try await harness.job(id)?.counters.pruned ?? 0 }
                #expect(pruned == 2)
                try await worker.stop()
            }
        }
    }

    /// A push service that does not speak HTTP/2 (its TLS agrees to `http/1.1` alone): the worker finds out on its
    /// first connection and sends over HTTP/1.1 with keep-alive from then on; every subscription gets each job once,
    /// and an unsubscribed one is pruned as over HTTP/2.
    @Test func aServiceWithoutHTTP2IsReachedOverHTTP1WithKeptConnections() async throws {
        try await WorkerHarness.with { harness in
            try await Self.withWebPush(harness, simulator: { $0.speaksHTTP2 = false }) { simulator, apps, key in
                var devices: [DeviceRecord] = []
                for i in 0..<40 {
                    devices.append(try Self.device(simulator, key: key, id: "h\(i)", user: "user-\(i % 4)"))
                }
                devices.append(try Self.device(simulator, key: key, id: "gone", user: "user-0"))
                simulator.unsubscribe(id: "gone")
                _ = try await harness.store.importDevices(devices, app: WorkerHarness.app)
                let worker = try harness.startWorker { $0.apps = apps }
                let jobs: [(String, Target)] = [
                    ("one-user", .users(["user-1"])), ("every-browser", .platforms(.all, [.web])),
                ]
                for (id, target) in jobs {
                    try await harness.publish(
                        Job(
                            id: id, app: WorkerHarness.app, target: target,
                            notification: JobNotification(
                                aps: ["alert": ["title": "Over HTTP/1.1", "body": .string(id)]],
                                custom: ["job": .string(id)])))
                    await harness.waitUntilFinished([id], in: .done)
                }
                let live = (0..<40).map { "h\($0)" }
                #expect(
                    Self.received(simulator, job: "one-user").map(\.id).sorted()
                        == live.filter {
                            (Int($0.dropFirst()) ?? 0) % 4 == 1
                        }.sorted())
                #expect(Self.received(simulator, job: "every-browser").map(\.id).sorted() == live.sorted())
                #expect(simulator.undecryptableCount == 0)
                // The service speaks nothing but HTTP/1.1: what it recorded came over the fallback.
                #expect(!simulator.requests.isEmpty)
                // Kept connections: far fewer than the 51 pushes (and the pool's 16 at most, plus the HTTP/2
                // attempts that found the service out).
                #expect(simulator.connectionsOpened <= 24, "\(simulator.connectionsOpened) connections")
                let dead = try await harness.store.deadTokens(app: WorkerHarness.app)
                #expect(dead.map(\.token.hex) == [devices[40].token.hex])
                try await worker.stop()
            }
        }
    }

    @Test func rateLimitsAndOutagesAreWaitedOutAndNothing4xxIsSentAgain() async throws {
        try await WorkerHarness.with { harness in
            try await Self.withWebPush(harness) { configuration in
                configuration.injectedFailures = [
                    WebPushInjectedFailure(status: 429, every: 1, times: 2, retryAfter: 3),
                    WebPushInjectedFailure(status: 503, every: 1, times: 1, retryAfter: 3),
                    WebPushInjectedFailure(status: 413, every: 1, idPrefix: "big"),
                ]
            } _: { simulator, apps, key in
                var devices = try (0..<8).map { try Self.device(simulator, key: key, id: "s\($0)", user: "u") }
                devices.append(try Self.device(simulator, key: key, id: "big", user: "u"))
                _ = try await harness.store.importDevices(devices, app: WorkerHarness.app)
                let worker = try harness.startWorker { $0.apps = apps }
                try await harness.publish(
                    Job(
                        id: "waits", app: WorkerHarness.app, target: .users(["u"]),
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string("waits")])))
                #expect(await harness.waitUntilFinished("waits") == .done)
                #expect(Self.received(simulator, job: "waits").map(\.id).sorted() == (0..<8).map { "s\($0)" })
                let requests = simulator.requests
                var bySubscription: [String: [WebPushSimulatorRequestRecord]] = [:]
                for request in requests { bySubscription[request.subscriptionID ?? "", default: []].append(request) }
                for (id, tries) in bySubscription {
                    // Every try but the last was one a retry may follow.
                    for earlier in tries.dropLast() {
                        #expect([429, 503].contains(earlier.status), "a \(earlier.status) was sent again (\(id))")
                    }
                }
                #expect(bySubscription["big"]?.filter { $0.status == 413 }.count == 1, "a 413 is not sent again")
                #expect(bySubscription["big"]?.last?.status == 413)
                // A 429 or 503 pauses the origin: nothing goes out before its Retry-After.
                for (position, refusal) in requests.enumerated() where refusal.status == 429 || refusal.status == 503 {
                    for later in requests[(position + 1)...] {
                        #expect(
                            later.receivedAt - refusal.receivedAt >= Int64(refusal.retryAfter ?? 0),
                            "a request went out during the origin's wait")
                    }
                }
                let status = try #require(try await harness.job("waits"))
                #expect(status.counters.sent == 8 && status.counters.failed == 1 && status.counters.pruned == 0)
                try await worker.stop()
            }
        }
    }

    @Test func aServiceRefusingTheVAPIDKeyStopsTheJobAndPrunesNothing() async throws {
        try await WorkerHarness.with { harness in
            // The simulator takes another key only: every request is 403 BadJwtToken.
            try await Self.withWebPush(harness) { configuration in
                configuration.vapidPublicKeys = [VAPIDKey.generate().applicationServerKey]
            } _: { simulator, apps, key in
                let devices = try (0..<5).map { try Self.device(simulator, key: key, id: "s\($0)", user: "u") }
                _ = try await harness.store.importDevices(devices, app: WorkerHarness.app)
                let worker = try harness.startWorker { $0.apps = apps }
                try await harness.publish(
                    Job(
                        id: "refused", app: WorkerHarness.app, target: .users(["u"]),
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string("refused")])))
                #expect(await harness.waitUntilFinished("refused") == .failed)
                #expect(simulator.requests.count == 1, "the first refusal stops the job")
                #expect(simulator.requests.first?.status == 403)
                #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == devices.count)
                #expect(try await harness.store.deadTokens(app: WorkerHarness.app).isEmpty)
                let status = try #require(try await harness.job("refused"))
                #expect(status.error?.contains("Forbidden") == true)
                try await worker.stop()
            }
        }
    }
}
