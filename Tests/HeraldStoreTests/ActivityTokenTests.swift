import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// The Live Activity token registry (schemas/020): push-to-start and update tokens, their lookups, and how device
/// deletes, token replacement and dead-token pruning treat them.
@Suite(.needsServices) struct ActivityTokenTests {
    static let app = "app"
    static func device(_ n: Int) -> DeviceToken { StoreTests.token(n, prefix: "d4") }
    static func startToken(_ n: Int) -> DeviceToken { StoreTests.token(n, prefix: "5a") }
    static func updateToken(_ n: Int) -> DeviceToken { StoreTests.token(n, prefix: "0d") }

    /// Registers device `n` of `app` with optional fields.
    @discardableResult
    static func register(
        _ store: Store, _ n: Int, app: String = app, user: String? = nil, locale: String? = nil,
        topics: [String] = [], environment: String? = nil, key: Int64? = nil
    ) async throws -> RegisteredDevice {
        var registration = DeviceRegistration(
            token: device(n), userID: user.map { .set($0) } ?? .keep, locale: locale.map { .set($0) } ?? .keep,
            topics: .set(topics), environment: environment.map { .set($0) } ?? .keep)
        registration.registeredBy = key
        return try await store.register(registration, app: app).device
    }

    static func rows(_ store: Store, _ sql: PostgresQuery) async throws -> [PostgresRow] {
        try await store.client.query(sql, logger: Logger(label: "test")).collect()
    }

    @Test func registrationCreatesRefreshesAndRotatesTheNewestToken() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await Self.register(store, 1)
            let created = try await store.registerStartToken(
                app: Self.app, device: Self.device(1), activityType: "Delivery", token: Self.startToken(1),
                registeredBy: nil)
            #expect(created.created && !created.replaced)
            let refreshed = try await store.registerStartToken(
                app: Self.app, device: Self.device(1), activityType: "Delivery", token: Self.startToken(1),
                registeredBy: nil)
            #expect(!refreshed.created && !refreshed.replaced)
            #expect(refreshed.registeredAt >= created.registeredAt)
            let rotatedStart = try await store.registerStartToken(
                app: Self.app, device: Self.device(1), activityType: "Delivery", token: Self.startToken(2),
                registeredBy: nil)
            #expect(!rotatedStart.created && rotatedStart.replaced)
            // Another type is another row.
            #expect(
                try await store.registerStartToken(
                    app: Self.app, device: Self.device(1), activityType: "Score", token: Self.startToken(3),
                    registeredBy: nil
                ).created)
            let delivery = try await store.startTokens(
                app: Self.app, activityType: "Delivery", devices: .all, limit: 10)
            #expect(delivery.tokens == [Self.startToken(2)])
            #expect(delivery.entries.first?.device == Self.device(1))

            let first = try await store.registerUpdateToken(
                app: Self.app, activityID: "order-1", device: Self.device(1), token: Self.updateToken(1),
                registeredBy: nil)
            #expect(first.created && !first.replaced)
            let same = try await store.registerUpdateToken(
                app: Self.app, activityID: "order-1", device: Self.device(1), token: Self.updateToken(1),
                registeredBy: nil)
            #expect(!same.created && !same.replaced)
            let rotated = try await store.registerUpdateToken(
                app: Self.app, activityID: "order-1", device: Self.device(1), token: Self.updateToken(2),
                registeredBy: nil)
            #expect(!rotated.created && rotated.replaced)
            let page = try await store.updateTokens(app: Self.app, activityID: "order-1", limit: 10)
            #expect(page.tokens == [Self.updateToken(2)] && !page.more)
            #expect(try await store.activitySummary(app: Self.app, activityID: "order-1")?.devices == 1)
            #expect(try await store.activitySummary(app: Self.app, activityID: "order-2") == nil)
            #expect(try await store.updateTokens(app: "other", activityID: "order-1", limit: 10).tokens.isEmpty)
        }
    }

    @Test func tokensNeedARegisteredDeviceAndARegisterOnlyKeysOwnDevice() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            do throws(StoreError) {
                _ = try await store.registerStartToken(
                    app: Self.app, device: Self.device(9), activityType: "T", token: Self.startToken(9),
                    registeredBy: nil)
                Issue.record("an unregistered device was accepted")
            } catch {
                #expect(error.code == .deviceNotRegistered)
                #expect(!error.description.contains(Self.device(9).hex))
                #expect(!error.description.contains(Self.startToken(9).hex))
            }
            // Registered for another app only: still unknown here.
            try await Self.register(store, 9, app: "other")
            await #expect(throws: StoreError.self) {
                try await store.registerUpdateToken(
                    app: Self.app, activityID: "a", device: Self.device(9), token: Self.updateToken(9),
                    registeredBy: nil)
            }

            try await Self.register(store, 1, key: 7)  // the register-only key 7's device
            try await Self.register(store, 2)  // the backend's
            #expect(
                try await store.registerStartToken(
                    app: Self.app, device: Self.device(1), activityType: "T", token: Self.startToken(1),
                    registeredBy: 7
                ).created)
            for (device, key) in [(2, Int64(7)), (1, Int64(8))] {
                do throws(StoreError) {
                    _ = try await store.registerUpdateToken(
                        app: Self.app, activityID: "a", device: Self.device(device), token: Self.updateToken(1),
                        registeredBy: key)
                    Issue.record("key \(key) changed device \(device)")
                } catch {
                    #expect(error.code == .notOwnDevice)
                }
            }
            // Any other key may register on any device; the rows remember the register-only key that wrote them.
            _ = try await store.registerUpdateToken(
                app: Self.app, activityID: "a", device: Self.device(1), token: Self.updateToken(1), registeredBy: 7)
            _ = try await store.registerUpdateToken(
                app: Self.app, activityID: "a", device: Self.device(1), token: Self.updateToken(2), registeredBy: nil)
            let owner = try await Self.rows(store, "SELECT registered_by FROM activity_update_tokens")
            #expect(try owner.map { try $0.decode(Int64?.self) } == [7])
            #expect(
                try await store.updateTokens(app: Self.app, activityID: "a", limit: 5).tokens == [Self.updateToken(2)])

            // Deleting: a register-only key only on its own device.
            await #expect(throws: StoreError.self) {
                try await store.deleteStartToken(
                    app: Self.app, device: Self.device(1), activityType: "T", registeredBy: 8)
            }
            #expect(
                try await store.deleteStartToken(
                    app: Self.app, device: Self.device(1), activityType: "T", registeredBy: 7))
            #expect(
                !(try await store.deleteStartToken(
                    app: Self.app, device: Self.device(1), activityType: "T", registeredBy: 7)))
            _ = try await store.registerUpdateToken(
                app: Self.app, activityID: "a", device: Self.device(2), token: Self.updateToken(3), registeredBy: nil)
            // Without a device, a register-only key removes only its own devices' tokens.
            #expect(try await store.deleteUpdateTokens(app: Self.app, activityID: "a", registeredBy: 7) == 1)
            #expect(
                try await store.updateTokens(app: Self.app, activityID: "a", limit: 5).tokens == [Self.updateToken(3)])
            #expect(
                try await store.deleteUpdateTokens(app: Self.app, activityID: "a", device: Self.device(2)) == 1)
            #expect(try await store.deleteUpdateTokens(app: Self.app, activityID: "a") == 0)
        }
    }

    @Test func startTokensAreFoundByDeviceTokensUsersTopicsLocalesAndAllInPages() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            // Devices 0..<12: user u(n % 3), topic "even" for even n, locale fr-CA for n < 4, sandbox for n == 5.
            for n in 0..<12 {
                try await Self.register(
                    store, n, user: "u\(n % 3)", locale: n < 4 ? "fr-CA" : "en", topics: n % 2 == 0 ? ["even"] : [],
                    environment: n == 5 ? "sandbox" : nil)
                // Every device but 10 and 11 has a token of type T; device 1 also of type U.
                if n < 10 {
                    _ = try await store.registerStartToken(
                        app: Self.app, device: Self.device(n), activityType: "T", token: Self.startToken(n),
                        registeredBy: nil)
                }
            }
            _ = try await store.registerStartToken(
                app: Self.app, device: Self.device(1), activityType: "U", token: Self.startToken(100),
                registeredBy: nil)
            try await Self.register(store, 50, app: "other", topics: ["even"])
            _ = try await store.registerStartToken(
                app: "other", device: Self.device(50), activityType: "T", token: Self.startToken(50),
                registeredBy: nil)

            func tokens(_ selection: DeviceSelection, type: String = "T") async throws -> [DeviceToken] {
                try await store.startTokens(app: Self.app, activityType: type, devices: selection, limit: 100).tokens
            }
            #expect(try await tokens(.all) == (0..<10).map(Self.startToken))
            #expect(try await tokens(.all, type: "U") == [Self.startToken(100)])
            #expect(try await tokens(.all, type: "V").isEmpty)
            #expect(try await tokens(.topic("even")) == [0, 2, 4, 6, 8].map(Self.startToken))
            #expect(try await tokens(.users(["u1", "u1", "nobody"])) == [1, 4, 7].map(Self.startToken))
            // Device 10 has no token of the type; device 50 is another app's.
            #expect(
                try await tokens(.tokens([Self.device(3), Self.device(10), Self.device(50), Self.device(2)]))
                    == [2, 3].map(Self.startToken))
            #expect(try await tokens(.devices(.locales(.all, ["fr"]))) == (0..<4).map(Self.startToken))
            #expect(try await tokens(.devices(.locales(.topic("even"), ["FR"]))) == [0, 2].map(Self.startToken))
            #expect(try await tokens(.devices(.locales(.users(["u0"]), ["en"]))) == [6, 9].map(Self.startToken))
            let sandbox = try await store.startTokens(
                app: Self.app, activityType: "T", devices: .tokens([Self.device(5)]), limit: 1)
            #expect(
                sandbox.entries == [
                    ActivityToken(
                        token: Self.startToken(5), device: Self.device(5), locale: "en", environment: "sandbox")
                ])
            #expect(!sandbox.more)

            // Keyset pages: every token once, in device order, `more` until the last page.
            for selection in [DeviceSelection.all, .users(["u0", "u1", "u2"])] {
                var seen: [DeviceToken] = []
                var cursor: String? = nil
                var pages = 0
                while true {
                    let page = try await store.startTokens(
                        app: Self.app, activityType: "T", devices: selection, after: cursor, limit: 4)
                    pages += 1
                    seen += page.tokens
                    cursor = page.cursor
                    #expect(page.more == (pages < 3), "\(selection) page \(pages)")
                    if !page.more { break }
                }
                #expect(pages == 3)
                #expect(seen == (0..<10).map(Self.startToken))
            }
        }
    }

    @Test func updateTokensPageAndEndingAnActivityRemovesAndReturnsThem() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for n in 0..<5 {
                try await Self.register(store, n, environment: n == 0 ? "sandbox" : nil)
                _ = try await store.registerUpdateToken(
                    app: Self.app, activityID: "game-1", device: Self.device(n), token: Self.updateToken(n),
                    registeredBy: nil)
            }
            _ = try await store.registerUpdateToken(
                app: Self.app, activityID: "game-2", device: Self.device(0), token: Self.updateToken(20),
                registeredBy: nil)
            let first = try await store.updateTokens(app: Self.app, activityID: "game-1", limit: 3)
            #expect(first.tokens == (0..<3).map(Self.updateToken) && first.more)
            #expect(first.entries.first?.environment == "sandbox")
            let second = try await store.updateTokens(
                app: Self.app, activityID: "game-1", after: first.cursor, limit: 3)
            #expect(second.tokens == [3, 4].map(Self.updateToken) && !second.more)
            #expect(try await store.activitySummary(app: Self.app, activityID: "game-1")?.devices == 5)

            let ended = try await store.endActivity(app: Self.app, activityID: "game-1")
            #expect(ended.map(\.token) == (0..<5).map(Self.updateToken))
            #expect(ended.map(\.device) == (0..<5).map(Self.device))
            #expect(ended.first?.environment == "sandbox")
            #expect(try await store.endActivity(app: Self.app, activityID: "game-1").isEmpty)
            #expect(try await store.activitySummary(app: Self.app, activityID: "game-1") == nil)
            #expect(
                try await store.updateTokens(app: Self.app, activityID: "game-2", limit: 3).tokens
                    == [Self.updateToken(20)])
        }
    }

    @Test func deletingOrReplacingADeviceDropsItsActivityTokens() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            for n in 0..<3 {
                try await Self.register(store, n, user: "u\(n)")
                _ = try await store.registerStartToken(
                    app: Self.app, device: Self.device(n), activityType: "T", token: Self.startToken(n),
                    registeredBy: nil)
                _ = try await store.registerUpdateToken(
                    app: Self.app, activityID: "a", device: Self.device(n), token: Self.updateToken(n),
                    registeredBy: nil)
            }
            #expect(try await store.deleteDevice(app: Self.app, token: Self.device(0)))
            // The device's token changed (old_token): the new device inherits its fields, not its activity tokens,
            // which the app registers again at launch.
            let replaced = try await store.register(
                DeviceRegistration(token: Self.device(9), oldToken: Self.device(1)), app: Self.app)
            #expect(replaced.replaced && replaced.device.userID == "u1")
            let start = try await store.startTokens(app: Self.app, activityType: "T", devices: .all, limit: 10)
            #expect(start.tokens == [Self.startToken(2)])
            #expect(
                try await store.updateTokens(app: Self.app, activityID: "a", limit: 10).tokens == [Self.updateToken(2)])
            // A refresh of a device keeps them.
            try await Self.register(store, 2, user: "u2")
            #expect(try await store.activitySummary(app: Self.app, activityID: "a")?.devices == 1)
            #expect(try await store.deleteDevices(app: Self.app) == 2)
            let left = try await Self.rows(
                store,
                "SELECT (SELECT count(*) FROM activity_start_tokens) + (SELECT count(*) FROM activity_update_tokens)")
            #expect(try left.first?.decode(Int64.self) == 0)
        }
    }

    @Test func deadActivityTokensArePrunedByTheDeviceRulesAndRecorded() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await Self.register(store, 1, user: "u1", locale: "fr", topics: ["news"], environment: "sandbox")
            try await Self.register(store, 2)
            try await Self.register(store, 3)
            try await Self.register(store, 1, app: "other")
            func start(_ n: Int, device: Int, app: String = ActivityTokenTests.app) async throws -> Int64 {
                try await store.registerStartToken(
                    app: app, device: Self.device(device), activityType: "T\(n)", token: Self.startToken(n),
                    registeredBy: nil
                ).registeredAt / 1000
            }
            func update(_ n: Int, device: Int) async throws -> Int64 {
                try await store.registerUpdateToken(
                    app: Self.app, activityID: "act-\(n)", device: Self.device(device), token: Self.updateToken(n),
                    registeredBy: nil
                ).registeredAt / 1000
            }
            let start1 = try await start(1, device: 1)
            let start2 = try await start(2, device: 1)
            let update1 = try await update(1, device: 1)
            let update2 = try await update(2, device: 3)
            let update3 = try await update(3, device: 3)
            // Device 2's own token dies below: its activity token goes with it (the cascade), unrecorded.
            _ = try await update(4, device: 2)
            // The same push-to-start token value in another app is that app's, and stays.
            _ = try await start(1, device: 1, app: "other")
            _ = try await store.startJob(id: "job", app: Self.app, targetKind: "activity")

            var writeBack = WriteBack(jobID: "job", app: Self.app)
            writeBack.targeted = 7
            writeBack.prunes = [
                // APNs saw them die after they registered: pruned.
                .init(token: Self.startToken(1), reason: "Unregistered", apnsTimestamp: start1 + 60_000),
                .init(token: Self.updateToken(1), reason: "ExpiredToken", apnsTimestamp: update1 + 60_000),
                // Registered (again) after APNs saw them die: kept.
                .init(token: Self.startToken(2), reason: "Unregistered", apnsTimestamp: start2 - 60_000),
                .init(token: Self.updateToken(2), reason: "Unregistered", apnsTimestamp: update2 - 60_000),
                // No timestamp: pruned unconditionally, however recent.
                .init(token: Self.updateToken(3), reason: "BadDeviceToken", apnsTimestamp: nil),
                // A device's own dead token, in the same write-back.
                .init(token: Self.device(2), reason: "DeviceTokenNotForTopic", apnsTimestamp: nil),
                // Nothing has this token (any more).
                .init(token: Self.startToken(77), reason: "BadDeviceToken", apnsTimestamp: nil),
            ]
            _ = update3
            #expect(try await store.write(writeBack) == 4)

            let job = try #require(try await store.job(app: Self.app, id: "job"))
            #expect(job.counters == JobCounters(targeted: 7, sent: 0, pruned: 4, failed: 3))
            #expect(try await store.device(app: Self.app, token: Self.device(2)) == nil)
            #expect(try await store.activitySummary(app: Self.app, activityID: "act-4") == nil)
            #expect(try await store.activitySummary(app: Self.app, activityID: "act-2")?.devices == 1)
            #expect(
                try await store.startTokens(app: Self.app, activityType: "T2", devices: .all, limit: 5).tokens
                    == [Self.startToken(2)])
            #expect(
                try await store.startTokens(app: Self.app, activityType: "T1", devices: .all, limit: 5).tokens
                    .isEmpty)
            #expect(
                try await store.startTokens(app: "other", activityType: "T1", devices: .all, limit: 5).tokens
                    == [Self.startToken(1)])
            #expect(try await store.activitySummary(app: Self.app, activityID: "act-1") == nil)
            #expect(try await store.activitySummary(app: Self.app, activityID: "act-3") == nil)

            let dead = try await Self.rows(
                store,
                """
                SELECT token, reason, token_kind, activity, job_id, user_id, locale, topics, environment,
                       registered_at IS NULL AND badge IS NULL, apns_timestamp IS NULL, apns_id IS NOT NULL
                FROM dead_tokens WHERE app_id = 'app' ORDER BY token
                """)
            typealias Record = (
                String, String, String?, String?, String?, String?, String?, [String]?, String?, Bool,
                Bool, Bool
            )
            let records = try dead.map { try $0.decode(Record.self) }
            #expect(
                records.map(\.0)
                    == [Self.updateToken(1), Self.updateToken(3), Self.startToken(1), Self.device(2)]
                    .map(\.hex))
            let byToken = Dictionary(uniqueKeysWithValues: records.map { ($0.0, $0) })
            let startRecord = try #require(byToken[Self.startToken(1).hex])
            #expect(startRecord.1 == "Unregistered" && startRecord.2 == "push_to_start" && startRecord.3 == "T1")
            #expect(startRecord.4 == "job" && startRecord.5 == "u1" && startRecord.6 == "fr")
            #expect(startRecord.7 == ["news"] && startRecord.8 == "sandbox")
            #expect(startRecord.9 && !startRecord.10 && startRecord.11)
            let updateRecord = try #require(byToken[Self.updateToken(3).hex])
            #expect(updateRecord.1 == "BadDeviceToken" && updateRecord.2 == "update" && updateRecord.3 == "act-3")
            #expect(updateRecord.9 && updateRecord.10)
            #expect(byToken[Self.updateToken(1).hex]?.3 == "act-1")
            // The device's own record is as before: no kind, restorable.
            #expect(byToken[Self.device(2).hex]?.2 == nil && byToken[Self.device(2).hex]?.9 == false)

            let failures = try await Self.rows(
                store, "SELECT token, status, reason FROM delivery_failures WHERE job_id = 'job' ORDER BY token")
            let failed = try failures.map { try $0.decode((String, Int?, String).self) }
            #expect(failed.map(\.0) == [Self.updateToken(2), Self.startToken(2), Self.startToken(77)].map(\.hex))
            #expect(
                failed.map(\.2) == [
                    "Unregistered (registered again since)", "Unregistered (registered again since)",
                    "BadDeviceToken (already pruned)",
                ])
            #expect(failed.map(\.1) == [410, 410, 400])

            // The same answers again (a redelivered batch): nothing more is pruned.
            var again = WriteBack(jobID: "job", app: Self.app)
            again.prunes = [.init(token: Self.startToken(1), reason: "Unregistered", apnsTimestamp: start1 + 60_000)]
            #expect(try await store.write(again) == 0)
        }
    }

    @Test func aWriteBackWithoutPrunesLeavesActivityTokensAlone() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await Self.register(store, 1)
            _ = try await store.registerUpdateToken(
                app: Self.app, activityID: "a", device: Self.device(1), token: Self.updateToken(1), registeredBy: nil)
            _ = try await store.startJob(id: "job", app: Self.app, targetKind: "activity")
            var writeBack = WriteBack(jobID: "job", app: Self.app)
            writeBack.targeted = 1
            writeBack.failures = [.init(token: Self.updateToken(1), status: 400, reason: "BadPriority")]
            #expect(try await store.write(writeBack) == 0)
            #expect(try await store.activitySummary(app: Self.app, activityID: "a")?.devices == 1)
            let job = try #require(try await store.job(app: Self.app, id: "job"))
            #expect(job.counters == JobCounters(targeted: 1, pruned: 0, failed: 1))
        }
    }
}
