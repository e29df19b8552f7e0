import APNSCore
import FCMSimulator
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// An app with FCM credentials instead of APNs ones (issue 36, "beside or instead of"), and a job's `fcm` block,
/// end to end: real RabbitMQ and PostgreSQL, the FCM simulator, one worker.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct AndroidOnlyAppTests {
    @Test func anAppWithoutAPNsCredentialsReachesItsAndroidPhonesAndFailsOnlyItsIPhones() async throws {
        try await WorkerHarness.with { harness in
            try await AndroidTests.withFCM(harness) { fcm, apps in
                // The other app loses its APNs credentials: FCM only.
                var apps = apps
                let index = try #require(apps.apps.firstIndex { $0.id == WorkerHarness.otherApp })
                apps.apps[index].auth = nil
                apps.apps[index].authByEnvironment = nil
                let app = WorkerHarness.otherApp
                let android = (0..<6).map { i in
                    DeviceRecord(
                        token: DeviceToken(trustedHex: TestFCM.registrationToken(100 + i)), userID: "u\(i % 2)",
                        locale: nil, topics: [], platform: .android)
                }
                let iphone = DeviceRecord(
                    token: WorkerHarness.token(1, prefix: "beef"), userID: "u0", locale: nil, topics: [])
                _ = try await harness.store.importDevices(android + [iphone], app: app)
                let worker = try harness.startWorker { $0.apps = apps }

                try await harness.publish(
                    Job(
                        id: "fcm-only", app: app, target: .users(["u0", "u1"]),
                        notification: JobNotification(
                            aps: ["alert": "hi"], custom: ["job": "fcm-only"],
                            fcm: [
                                "android": [
                                    "ttl": "120s", "notification": ["color": "#11aa22", "tag": "t1"],
                                ]
                            ])))
                let state = await harness.waitUntilFinished("fcm-only", app: app)
                #expect(state == .done)
                #expect(harness.received(job: "fcm-only", app: app).isEmpty)
                let received = AndroidTests.received(fcm, job: "fcm-only")
                #expect(received.sorted() == android.map(\.token.hex).sorted())
                let status = try #require(try await harness.job("fcm-only", app: app))
                #expect(status.counters.sent == android.count)
                #expect(status.counters.failed == 1, "the iPhone of an app without APNs credentials fails")
                #expect(status.counters.pruned == 0)
                // The job's fcm block is merged over the message Herald built.
                let record = try #require(fcm.records.first { $0.messageJSON.contains(#""job":"fcm-only""#) })
                let message = try #require(
                    try JSONSerialization.jsonObject(with: Data(record.messageJSON.utf8)) as? [String: Any])
                let androidConfig = try #require(message["android"] as? [String: Any])
                #expect(androidConfig["ttl"] as? String == "120s")
                let shown = try #require(androidConfig["notification"] as? [String: Any])
                #expect(shown["color"] as? String == "#11aa22")
                #expect(shown["tag"] as? String == "t1")
                #expect(shown["channel_id"] as? String == "news", "Herald's own fields stay beside the block's")
                #expect(try await harness.store.deviceCount(app: app) == android.count + 1)
                try await worker.stop()
            }
        }
    }
}
