import APNSCore
import APNSSimulator
import FCMSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import NIOPosix
import Testing

/// iPhones and Android phones of the same users, end to end: real RabbitMQ and PostgreSQL, the APNs simulator and
/// the FCM simulator, one worker built as `herald worker` builds it.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct AndroidTests {
    /// Starts an FCM simulator, writes the test service account beside the harness's apps file, and gives every app
    /// of the harness an `fcm` block pointing at it.
    static func withFCM(
        _ harness: WorkerHarness, simulator configure: (inout FCMSimulatorConfiguration) -> Void = { _ in },
        _ body: (FCMSimulator, AppsFile) async throws -> Void
    ) async throws {
        var configuration = TestFCM.simulatorConfiguration()
        configure(&configuration)
        var logger = Logger(label: "fcm-sim")
        logger.logLevel = .warning
        let simulator = FCMSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let port = try await simulator.start()
        try TestFCM.serviceAccountJSON(tokenURI: simulator.tokenAudience).write(
            toFile: harness.appsDirectory + "/service-account.json", atomically: true, encoding: .utf8)
        var apps = harness.apps
        for index in apps.apps.indices {
            apps.apps[index].fcm = .init(
                serviceAccountFile: "service-account.json", endpoint: "https://127.0.0.1:\(port)", caFile: "ca.pem",
                channelID: "news")
        }
        do {
            try await body(simulator, apps)
        } catch {
            try? await simulator.stop()
            throw error
        }
        try await simulator.stop()
    }

    /// 40 iPhones and 40 Android phones (every fourth by installation id), users of two devices each (one of each
    /// platform), every tenth of each platform dead.
    static func devices() -> [DeviceRecord] {
        (0..<40).flatMap { i -> [DeviceRecord] in
            let dead = i % 10 == 9
            let ios = DeviceRecord(
                token: WorkerHarness.token(i, prefix: dead ? "dead" : "beef"), userID: "user-\(i)", locale: "en",
                topics: i % 2 == 0 ? ["sports"] : [])
            let android: DeviceRecord
            if i % 4 == 3 {
                // An installation id: 22 base64url characters, the first of c…f.
                let suffix = String(i)
                let fid = "c" + String(repeating: "A", count: 21 - suffix.count) + suffix
                android = DeviceRecord(
                    token: DeviceToken(trustedHex: fid), userID: "user-\(i)", locale: "fr",
                    topics: i % 2 == 0 ? ["sports"] : [], platform: .android, fcmKind: .fid)
            } else {
                android = DeviceRecord(
                    token: DeviceToken(trustedHex: (dead ? "dead" : "") + TestFCM.registrationToken(i)),
                    userID: "user-\(i)", locale: "fr", topics: i % 2 == 0 ? ["sports"] : [], platform: .android)
            }
            return [ios, android]
        }
    }

    /// The Android tokens FCM accepted for job `id` (its `data.job`), with how many times each.
    static func received(_ simulator: FCMSimulator, job id: String) -> [String] {
        simulator.records.compactMap { record in
            guard let object = try? JSONSerialization.jsonObject(with: Data(record.messageJSON.utf8)) as? [String: Any],
                let data = object["data"] as? [String: String], data["job"] == id
            else { return nil }
            return record.target.value
        }
    }

    @Test func jobsOfEveryTargetKindReachEveryDeviceOfBothPlatformsOnceAndPruneTheDead() async throws {
        let deadOnAPNs: (inout APNSSimulatorConfiguration) -> Void = { $0.deadTokenPrefixes = ["dead"] }
        try await WorkerHarness.with(simulator: deadOnAPNs) { harness in
            try await Self.withFCM(harness, simulator: { $0.deadTokenPrefixes = ["dead"] }) { fcm, apps in
                let devices = Self.devices()
                _ = try await harness.store.importDevices(devices, app: WorkerHarness.app)
                let live = devices.filter { !$0.token.hex.hasPrefix("dead") }
                let worker = try harness.startWorker { $0.apps = apps }

                let listed = [devices[0], devices[1], devices[2], devices[3]]  // two iPhones, two Android phones
                let jobs: [(String, Target, [DeviceRecord])] = [
                    ("tokens", .tokens(listed.map(\.token.hex)), listed),
                    ("users", .users(["user-1", "user-2"]), live.filter { ["user-1", "user-2"].contains($0.userID) }),
                    ("topic", .topic("sports"), live.filter { $0.topics.contains("sports") }),
                    ("all", .all, live),
                ]
                for (id, target, _) in jobs {
                    try await harness.publish(
                        Job(
                            id: id, app: WorkerHarness.app, target: target,
                            notification: JobNotification(
                                collapseID: "c-\(id)",
                                aps: ["alert": ["title": "Hello", "body": .string("from \(id)")]],
                                custom: ["job": .string(id), "n": .integer(7)],
                                localizations: ["fr": ["title": "Bonjour", "body": .string("de \(id)")]])))
                }
                // A small job of listed tokens, one payload for all: delivered in a group of small jobs, each token
                // through the provider its form names.
                let grouped = [devices[4], devices[5], devices[6], devices[7]]
                try await harness.publish(
                    Job(
                        id: "group", app: WorkerHarness.app, target: .tokens(grouped.map(\.token.hex)),
                        notification: JobNotification(aps: ["alert": "grouped"], custom: ["job": "group"])))
                // `target.platforms`: a users job to Android phones only, and a small job of listed tokens to iPhones
                // only; the others are neither sent to nor counted.
                try await harness.publish(
                    Job(
                        id: "android-only", app: WorkerHarness.app,
                        target: .platforms(.users(["user-1", "user-2"]), [.android]),
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": "android-only"])))
                try await harness.publish(
                    Job(
                        id: "ios-only", app: WorkerHarness.app,
                        target: .platforms(.tokens(grouped.map(\.token.hex)), [.ios]),
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": "ios-only"])))
                await harness.waitUntilFinished(
                    Set(jobs.map(\.0) + ["group", "android-only", "ios-only"]), in: .done)
                let usersAndroid = live.filter { ["user-1", "user-2"].contains($0.userID) && $0.platform == .android }
                #expect(harness.received(job: "android-only").isEmpty)
                #expect(Self.received(fcm, job: "android-only").sorted() == usersAndroid.map(\.token.hex).sorted())
                #expect(try await harness.job("android-only")?.counters.targeted == usersAndroid.count)
                #expect(Self.received(fcm, job: "ios-only").isEmpty)
                #expect(
                    harness.received(job: "ios-only").sorted()
                        == grouped.filter { $0.platform == .ios }.map(\.token.hex).sorted())
                #expect(
                    harness.received(job: "group").sorted()
                        == grouped.filter { $0.platform == .ios }.map(\.token.hex).sorted())
                #expect(
                    Self.received(fcm, job: "group").sorted()
                        == grouped.filter { $0.platform == .android }.map(\.token.hex).sorted())

                for (id, _, expected) in jobs {
                    let apple = harness.received(job: id)
                    let android = Self.received(fcm, job: id)
                    let expectedApple = expected.filter { $0.platform == .ios }.map(\.token.hex)
                    let expectedAndroid = expected.filter { $0.platform == .android }.map(\.token.hex)
                    #expect(apple.sorted() == expectedApple.sorted(), "job \(id): iPhones, each once")
                    #expect(android.sorted() == expectedAndroid.sorted(), "job \(id): Android phones, each once")
                    let status = try #require(try await harness.job(id))
                    #expect(status.counters.sent == expected.count, "job \(id) counts devices of both platforms")
                }
                // What an Android phone got: the French alert, data as strings, collapse key, priority, channel.
                let record = try #require(
                    fcm.records.first {
                        $0.target.value == devices[1].token.hex && $0.messageJSON.contains(#""job":"tokens""#)
                    })
                let message = try #require(
                    try JSONSerialization.jsonObject(with: Data(record.messageJSON.utf8)) as? [String: Any])
                let notification = try #require(message["notification"] as? [String: Any])
                #expect(notification["title"] as? String == "Bonjour")
                #expect((message["data"] as? [String: String])?["n"] == "7")
                let android = try #require(message["android"] as? [String: Any])
                #expect(android["collapse_key"] as? String == "c-tokens")
                #expect(android["priority"] as? String == "HIGH")
                #expect((android["notification"] as? [String: Any])?["channel_id"] as? String == "news")
                // An installation id went in `fid`.
                #expect(fcm.records.contains { if case .fid = $0.target { true } else { false } })

                // Dead devices of both platforms are gone and recorded; one access token served the whole run.
                #expect(try await harness.store.deviceCount(app: WorkerHarness.app) == live.count)
                let dead = Set(try await harness.store.deadTokens(app: WorkerHarness.app).map(\.token))
                #expect(dead == Set(devices.filter { $0.token.hex.hasPrefix("dead") }.map(\.token)))
                #expect(fcm.mintCount(for: TestFCM.clientEmail) == 1)
                try await worker.stop()
            }
        }
    }

    @Test func quotaAndOutageAnswersAreWaitedOutAndNothingRefusedIsSentTwice() async throws {
        try await WorkerHarness.with { harness in
            try await Self.withFCM(harness) { configuration in
                configuration.foreignTokenPrefixes = ["foreign"]
                // The first three sends are refused for the project's quota, the next two for an outage, each
                // asking for 3 seconds.
                configuration.injectedFailures = [
                    FCMInjectedFailure(status: 429, every: 1, times: 3, retryAfter: 3),
                    FCMInjectedFailure(status: 503, every: 1, times: 2, retryAfter: 3),
                ]
            } _: { fcm, apps in
                let devices = (0..<12).map { i in
                    DeviceRecord(
                        token: DeviceToken(trustedHex: (i == 11 ? "foreign" : "") + TestFCM.registrationToken(i)),
                        platform: .android)
                }
                _ = try await harness.store.importDevices(devices, app: WorkerHarness.app)
                let worker = try harness.startWorker { $0.apps = apps }
                try await harness.publish(
                    Job(
                        id: "quota", app: WorkerHarness.app, target: .all,
                        notification: JobNotification(aps: ["alert": "hi"], custom: ["job": .string("quota")])))
                #expect(await harness.waitUntilFinished("quota") == .done)

                // Every device FCM took is reached once; the foreign one was refused once and pruned.
                let received = Self.received(fcm, job: "quota")
                #expect(received.sorted() == devices.dropLast().map(\.token.hex).sorted())
                let requests = fcm.requests.filter { $0.endpoint == .send }
                var byToken: [String: [FCMSimulatorRequestRecord]] = [:]
                for request in requests { byToken[request.target?.value ?? "", default: []].append(request) }
                for (token, tries) in byToken {
                    for (earlier, later) in zip(tries, tries.dropFirst()) {
                        #expect(
                            [429, 500, 503].contains(earlier.status),
                            "a \(earlier.status) was sent again (\(token.suffix(4)))")
                        if let wait = earlier.retryAfter {
                            #expect(later.receivedAt - earlier.receivedAt >= Int64(wait), "sent before its Retry-After")
                        }
                    }
                }
                #expect(requests.filter { $0.status == 429 || $0.status == 503 }.count == 5)
                // A quota answer pauses the whole project: no device of it is sent to before its Retry-After.
                for (position, quota) in requests.enumerated() where quota.status == 429 {
                    for later in requests[(position + 1)...] {
                        #expect(
                            later.receivedAt - quota.receivedAt >= Int64(quota.retryAfter ?? 0),
                            "a request went out during the project's quota wait")
                    }
                }
                let status = try #require(try await harness.job("quota"))
                #expect(status.counters.sent == 11 && status.counters.pruned == 1)
                #expect(fcm.mintCount(for: TestFCM.clientEmail) == 1)
                try await worker.stop()
            }
        }
    }
}
