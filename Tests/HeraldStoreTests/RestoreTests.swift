import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// Dead-token records keep the whole device (schemas/008), and a job's prunes can be undone from them.
@Suite(.needsServices) struct RestoreTests {
    static func token(_ n: Int) -> DeviceToken { StoreTests.token(n, prefix: "b2") }

    /// Registers four devices with every field set, and prunes them all with job "j" of app "app".
    static func registerAndPrune(_ store: Store) async throws -> [RegisteredDevice] {
        var devices: [RegisteredDevice] = []
        for n in 0..<4 {
            let registration = DeviceRegistration(
                token: token(n), userID: .set("user-\(n)"), locale: .set(n % 2 == 0 ? "fr-CA" : "en"),
                topics: .set(["news", "topic-\(n)"]), environment: .set(n == 3 ? "sandbox" : "production"))
            devices.append(try await store.register(registration, app: "app").device)
        }
        _ = try await store.startJob(id: "j", app: "app", targetKind: "all")
        var writeBack = WriteBack(jobID: "j", app: "app")
        writeBack.targeted = 4
        writeBack.prunes = (0..<4).map { .init(token: token($0), reason: "BadDeviceToken", apnsTimestamp: nil) }
        #expect(try await store.write(writeBack) == 4)
        #expect(try await store.deviceCount(app: "app") == 0)
        return devices
    }

    @Test func migration008AddsTheDeviceColumnsToDeadTokensAndTheSuspectCountToJobs() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            // Each statement fails unless every column exists.
            let logger = Logger(label: "t")
            try await store.client.query(
                "SELECT user_id, locale, topics, environment, registered_at, badge FROM dead_tokens LIMIT 0",
                logger: logger)
            try await store.client.query("SELECT suspect_answers FROM jobs LIMIT 0", logger: logger)
            let migrations = try Migration.load(from: TestServices.schemasDirectory)
            #expect(migrations.contains { $0.version == 8 && $0.name == "008_restorable_dead_tokens.sql" })
        }
    }

    @Test func aJobsPrunedDevicesComeBackAsTheyWereAndANewerRegistrationIsKept() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let before = try await Self.registerAndPrune(store)
            // Token 1 registered again since, with another user: it is skipped, not overwritten.
            _ = try await store.register(DeviceRegistration(token: Self.token(1), userID: .set("new")), app: "app")

            let result = try await store.restorePrunedDevices(JobKey(app: "app", id: "j"))
            #expect(result == DeviceRestoration(restored: 3, skipped: 1, unrestorable: 0))
            for device in before where device.token != Self.token(1) {
                #expect(try await store.device(app: "app", token: device.token) == device)
            }
            #expect(try await store.device(app: "app", token: Self.token(1))?.userID == "new")

            // Again: nothing more to restore; another job or app restores nothing.
            #expect(
                try await store.restorePrunedDevices(JobKey(app: "app", id: "j"))
                    == DeviceRestoration(restored: 0, skipped: 4, unrestorable: 0))
            #expect(
                try await store.restorePrunedDevices(JobKey(app: "other", id: "j"))
                    == DeviceRestoration(restored: 0, skipped: 0, unrestorable: 0))
        }
    }

    @Test func recordsWithoutDetailsAreCountedUnrestorableAndSuspectAnswersAddUpOnTheJob() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            _ = try await store.startJob(id: "old", app: "app", targetKind: "all")
            // A record as written before schemas/008.
            try await store.client.query(
                """
                INSERT INTO dead_tokens (app_id, token, reason, job_id)
                VALUES ('app', \(Self.token(9).hex), 'Unregistered', 'old')
                """,
                logger: Logger(label: "t"))
            #expect(
                try await store.restorePrunedDevices(JobKey(app: "app", id: "old"))
                    == DeviceRestoration(restored: 0, skipped: 0, unrestorable: 1))

            var writeBack = WriteBack(jobID: "old", app: "app")
            writeBack.sent = 30
            writeBack.suspectAnswers = 2
            writeBack.failures = [.init(token: Self.token(1), status: 400, reason: "BadDeviceToken")]
            try await store.write(writeBack)
            let counts = try await store.pruneBreakerCounts(JobKey(app: "app", id: "old"))
            #expect(counts.answers == 31)
            #expect(counts.suspect == 2)
        }
    }
}
