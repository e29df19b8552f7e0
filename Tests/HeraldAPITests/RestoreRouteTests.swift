import APNSCore
import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /v1/apps/{app}/jobs/{id}/restore`: a job's pruned devices come back; bounded input; same auth as the rest.
@Suite(.needsServices) struct RestoreRouteTests {
    @Test func aJobsPrunedDevicesAreRestoredWithTheirUserLocaleAndTopics() async throws {
        try await APIHarness.run { h in
            let app = APIHarness.appA
            let tokens = (0..<3).map { DeviceToken(trustedHex: APIHarness.token($0)) }
            for (n, token) in tokens.enumerated() {
                _ = try await h.store.register(
                    DeviceRegistration(
                        token: token, userID: .set("user-\(n)"), locale: .set("de"), topics: .set(["news"])),
                    app: app)
            }
            _ = try await h.store.startJob(id: "pruning", app: app, targetKind: "all")
            var writeBack = WriteBack(jobID: "pruning", app: app)
            writeBack.prunes = tokens.map { .init(token: $0, reason: "BadDeviceToken", apnsTimestamp: nil) }
            try await h.store.write(writeBack)
            #expect(try await h.store.deviceCount(app: app) == 0)
            // Registered again since: kept as it is.
            _ = try await h.store.register(DeviceRegistration(token: tokens[2], userID: .set("newer")), app: app)

            // Still running: it could prune again after a restore.
            let early = try await h.request(.post, "/v1/apps/\(app)/jobs/pruning/restore", key: h.keyA)
            #expect(early.status == .conflict)
            #expect((early.object["error"] as? [String: Any])?["code"] as? String == "job_running")
            #expect(try await h.store.deviceCount(app: app) == 1)
            _ = try await h.store.failJob(JobKey(app: app, id: "pruning"), reason: "pruning stopped")

            let restored = try await h.request(.post, "/v1/apps/\(app)/jobs/pruning/restore", key: h.keyA)
            #expect(restored.status == .ok)
            #expect(restored.object["restored"] as? Int == 2)
            #expect(restored.object["skipped"] as? Int == 1)
            let device = try #require(try await h.store.device(app: app, token: tokens[0]))
            #expect(device.userID == "user-0")
            #expect(device.locale == "de")
            #expect(device.topics == ["news"])
            #expect(try await h.store.device(app: app, token: tokens[2])?.userID == "newer")

            // Another app's key: 403; unknown job: 404; no key: 401; bounded and control-free ids: 400.
            #expect(
                try await h.request(.post, "/v1/apps/\(app)/jobs/pruning/restore", key: h.keyB).status == .forbidden)
            #expect(try await h.request(.post, "/v1/apps/\(app)/jobs/nope/restore", key: h.keyA).status == .notFound)
            #expect(
                try await h.request(.post, "/v1/apps/\(app)/jobs/pruning/restore", key: nil).status == .unauthorized)
            let long = String(repeating: "x", count: 129)
            let tooLong = try await h.request(.post, "/v1/apps/\(app)/jobs/\(long)/restore", key: h.keyA)
            #expect(tooLong.status == .badRequest)
            let control = try await h.request(.post, "/v1/apps/\(app)/jobs/a%07b/restore", key: h.keyA)
            #expect(control.status == .badRequest)
        }
    }
}
