import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing
import WebPushCore

/// Web Push subscriptions as devices (schemas/034, issue 37): what the registry keeps of them (the endpoint as the
/// token, the keys, the expiration), how registration refreshes and replaces them, and where their subscription
/// travels (every read for delivery, prunes, reports, events, restores, the expired listing).
@Suite(.needsServices) struct WebSubscriptionStoreTests {
    typealias Fixtures = WebSubscriptionFixtures
    static let logger = Logger(label: "test.web")

    static func token(_ n: Int) -> DeviceToken { DeviceToken(trustedHex: Fixtures.endpoint(n)) }

    static func web(_ n: Int, other: Bool = false, expires: Int64? = nil, user: String? = nil) -> DeviceRegistration {
        DeviceRegistration(
            webSubscription: Fixtures.subscription(n, other: other, expirationTime: expires),
            userID: user.map { .set($0) } ?? .keep, topics: .set(["news"]))
    }

    @Test func aWebSubscriptionIsRegisteredRefreshedWithNewKeysAndReadWithItsSubscriptionEverywhere() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let registered = try await store.register(Self.web(1, expires: 1_900_000_000_000, user: "u1"), app: "a")
            #expect(registered.created && registered.device.platform == .web && registered.device.fcmKind == nil)
            #expect(registered.device.token == Self.token(1))
            #expect(registered.device.webSubscription == Fixtures.subscription(1, expirationTime: 1_900_000_000_000))

            // The browser subscribes again at the same endpoint with new keys and no expiration: both are written.
            let again = try await store.register(Self.web(1, other: true), app: "a")
            #expect(!again.created && again.device.userID == "u1")
            #expect(again.device.webSubscription == Fixtures.subscription(1, other: true))

            _ = try await store.register(Self.web(2, expires: 1_800_000_000_123, user: "u2"), app: "a")
            _ = try await store.register(
                DeviceRegistration(
                    token: DeviceToken(trustedHex: "a1" + String(repeating: "0", count: 62)), userID: .set("u1"),
                    topics: .set(["news"])), app: "a")
            let imported = try await store.importDevicesCounting(
                [DeviceRecord(webSubscription: Fixtures.subscription(3, other: true), userID: "u2", topics: ["news"])],
                app: "a")
            #expect(imported == DeviceImportCounts(written: 1, platformConflicts: 0))

            let expected: [DeviceToken: WebPushSubscription] = [
                Self.token(1): Fixtures.subscription(1, other: true),
                Self.token(2): Fixtures.subscription(2, expirationTime: 1_800_000_000_123),
                Self.token(3): Fixtures.subscription(3, other: true),
            ]
            func check(_ devices: [StoredDevice], _ read: String, withSubscriptions: Bool = true) {
                #expect(devices.count == 4, "\(read)")
                for device in devices {
                    // A page without details (an app with neither FCM nor Web Push) reads no subscription.
                    #expect(device.webSubscription == (withSubscriptions ? expected[device.token] : nil), "\(read)")
                    #expect(device.platform == (expected[device.token] == nil ? .ios : .web), "\(read)")
                    // What the sender reads: the origin, the request path and the keys, as a fresh parse gives them.
                    if let subscription = device.webSubscription {
                        let parsed = try? WebPushEndpoint(subscription.endpoint.url)
                        #expect(subscription.endpoint.origin == parsed?.origin, "\(read)")
                        #expect(subscription.endpoint.path == parsed?.path, "\(read)")
                        #expect(subscription.keys.p256dh.count == 65 && subscription.keys.auth.count == 16)
                    }
                }
            }
            let all = try await store.devicesPage(app: "a", filter: .all, after: nil, limit: 10)
            check(try await store.devices(app: "a", tokens: all.map(\.token)), "devices(app:tokens:)")
            for filter in [DeviceFilter.all, .topic("news"), .users(["u1", "u2"]), .locales(.all, [])] {
                for (details, subscriptions) in [(true, true), (true, false), (false, false)] {
                    let page = try await store.devicesPage(
                        app: "a", filter: filter, after: nil, limit: 10, withDetails: details,
                        withSubscriptions: subscriptions)
                    if case .locales = filter { continue }  // no locales stored: an empty page
                    check(page, "\(filter), details \(details)", withSubscriptions: details && subscriptions)
                }
            }
            let listed = try await store.registeredDevicesPage(app: "a", after: nil, limit: 10)
            #expect(listed.filter { $0.platform == .web }.count == 3)
            for device in listed { #expect(device.webSubscription == expected[device.token]) }
            let one = try #require(try await store.device(app: "a", token: Self.token(2)))
            #expect(one.webSubscription?.expirationTime == 1_800_000_000_123 && one.userID == "u2")

            // Deleted by its endpoint.
            #expect(try await store.deleteDevice(app: "a", token: Self.token(2)))
            #expect(try await store.device(app: "a", token: Self.token(2)) == nil)
        }
    }

    @Test func aPushSubscriptionChangeReplacesTheOldEndpointAndAnOldTokenOfAnotherPlatformIsRefused() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            _ = try await store.register(Self.web(1, user: "u1"), app: "a")
            var moved = DeviceRegistration(webSubscription: Fixtures.subscription(2, other: true))
            moved.oldToken = Self.token(1)
            let result = try await store.register(moved, app: "a")
            #expect(result.replaced && result.created && result.device.userID == "u1")
            #expect(result.device.topics == ["news"])
            #expect(result.device.webSubscription == Fixtures.subscription(2, other: true))
            #expect(try await store.device(app: "a", token: Self.token(1)) == nil)

            // An iOS device's token cannot be replaced by an endpoint, nor an endpoint registered on another platform.
            let ios = DeviceToken(trustedHex: "a1" + String(repeating: "0", count: 62))
            _ = try await store.register(DeviceRegistration(token: ios, userID: .set("u3")), app: "a")
            var fromIOS = DeviceRegistration(webSubscription: Fixtures.subscription(3))
            fromIOS.oldToken = ios
            await #expect {
                _ = try await store.register(fromIOS, app: "a")
            } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .platformConflict && error.message.hasPrefix("the old_token is registered as")
                    && error.message.contains("an iOS device")
            }
            #expect(try await store.device(app: "a", token: Self.token(3)) == nil)
            // (No token is both an endpoint and another platform's: a registration of one as another breaks the
            // columns' rules before it could conflict, as theColumnsHoldWebRowsToTheirRules shows.)
            #expect(try await store.device(app: "a", token: Self.token(2))?.webSubscription != nil)
        }
    }

    @Test func theColumnsHoldWebRowsToTheirRules() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let keys = Fixtures.subscription(1).keys.stored
            let refused: [(String, String, String?)] = [
                ("web", Fixtures.endpoint(1), nil),  // a web device has its keys
                ("web", "http://push.example/x", keys),  // https only
                ("web", "https://push.example/x#frag", keys),  // no fragment
                ("web", "https://push.example/a b", keys),  // no whitespace
                ("web", "https://push.example/" + String(repeating: "a", count: 2028), keys),  // 2,049 bytes
                ("web", Fixtures.endpoint(1), "short.keys"),  // the stored form of the keys
                ("ios", "abcdef00", keys),  // keys on another platform
            ]
            for (platform, token, keys) in refused {
                await #expect(throws: PSQLError.self, "\(platform) \(token.prefix(40)) \(keys ?? "nil")") {
                    try await store.client.query(
                        "INSERT INTO devices (app_id, token, platform, web_keys) VALUES ('a', \(token), \(platform), \(keys))",
                        logger: Self.logger)
                }
            }
            await #expect(throws: PSQLError.self) {
                try await store.client.query(
                    "INSERT INTO devices (app_id, token, platform, fcm_kind, web_keys) VALUES ('a', \(Fixtures.endpoint(1)), 'web', 'token', \(keys))",
                    logger: Self.logger)
            }
            // At the bounds: 2,048 bytes, the scheme in capitals.
            for token in ["https://push.example/" + String(repeating: "a", count: 2027), "HTTPS://Push.Example/x"] {
                try await store.client.query(
                    "INSERT INTO devices (app_id, token, platform, web_keys) VALUES ('a', \(token), 'web', \(keys))",
                    logger: Self.logger)
            }
            #expect(try await store.deviceCount(app: "a") == 2)
            let rows = try await store.client.query(
                """
                SELECT herald_endpoint_origin('HTTPS://Push.Example:443/x'), herald_endpoint_origin('https://a.b:8443?q'),
                       herald_endpoint_origin('https://[::1]/x')
                """, logger: Self.logger)
            for try await (a, b, c) in rows.decode((String, String, String).self) {
                #expect([a, b, c] == ["https://push.example", "https://a.b:8443", "https://[::1]"])
            }
        }
    }

    @Test func aPrunedWebSubscriptionIsReportedAnnouncedWithItsOriginAndRestoredWithItsKeys() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.setEventApps(with: ["a"], without: [])
            _ = try await store.register(Self.web(1, other: true, expires: 1_900_000_000_000, user: "u1"), app: "a")
            _ = try await store.register(Self.web(2), app: "a")
            _ = try await store.startJob(id: "j", app: "a", targetKind: "all")
            var writeBack = WriteBack(jobID: "j", app: "a")
            writeBack.targeted = 2
            writeBack.prunes = [Self.token(1), Self.token(2)].map {
                .init(token: $0, reason: "410", apnsTimestamp: nil)
            }
            #expect(try await store.write(writeBack) == 2)
            #expect(try await store.deviceCount(app: "a") == 0)

            let report = try await store.deadTokenReport(app: "a", since: 0)
            let byToken = Dictionary(uniqueKeysWithValues: report.records.map { ($0.token, $0) })
            #expect(byToken[Self.token(1)]?.platform == .web && byToken[Self.token(1)]?.fcmKind == nil)
            #expect(byToken[Self.token(1)]?.endpointOrigin == "https://updates.push.services.mozilla.com")
            #expect(byToken[Self.token(2)]?.endpointOrigin == "https://web.push.apple.com")

            let rows = try await store.client.query(
                "SELECT body::text FROM event_outbox WHERE routing_key = 'token.pruned.a'", logger: Self.logger)
            var bodies: [String] = []
            for try await body in rows.decode(String.self) { bodies.append(body) }
            #expect(bodies.count == 1)
            let event = try #require(bodies.first.map { Data($0.utf8) })
            let object = try #require(try JSONSerialization.jsonObject(with: event) as? [String: Any])
            let entries = try #require(object["tokens"] as? [[String: String]])
            #expect(
                Set(entries) == [
                    [
                        "token": Fixtures.endpoint(1), "reason": "410", "platform": "web",
                        "endpoint_origin": "https://updates.push.services.mozilla.com",
                    ],
                    [
                        "token": Fixtures.endpoint(2), "reason": "410", "platform": "web",
                        "endpoint_origin": "https://web.push.apple.com",
                    ],
                ])
            // No key is in the event.
            #expect(!(bodies.first ?? "").contains(Fixtures.otherP256dh))

            #expect(
                try await store.restorePrunedDevices(JobKey(app: "a", id: "j"))
                    == DeviceRestoration(restored: 2, skipped: 0, unrestorable: 0))
            let restored = try await store.devices(app: "a", tokens: [Self.token(1), Self.token(2)])
            #expect(
                Set(restored.compactMap(\.webSubscription)) == [
                    Fixtures.subscription(1, other: true, expirationTime: 1_900_000_000_000),
                    Fixtures.subscription(2),
                ])
            #expect(try await store.device(app: "a", token: Self.token(1))?.userID == "u1")
        }
    }

    @Test func expiredSubscriptionsAreListedEarliestFirstAndPrunedAsSubscriptionExpired() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.setEventApps(with: ["a"], without: [])
            let now = try await store.databaseNow()
            // Expired 3, 2 and 1 hours ago; one in an hour; one without expiration; another app's expired one.
            let hour: Int64 = 3_600_000
            for (n, expires) in [(1, now - 2 * hour), (2, now - 3 * hour), (3, now - hour), (4, now + hour)] {
                _ = try await store.register(Self.web(n, expires: expires, user: "u\(n)"), app: "a")
            }
            _ = try await store.register(Self.web(5), app: "a")
            _ = try await store.register(Self.web(6, expires: now - hour), app: "b")

            var listed: [ExpiredWebSubscription] = []
            var cursor: ExpiredWebSubscriptionCursor? = nil
            while true {
                let page = try await store.expiredWebSubscriptions(
                    app: "a", expiredBefore: now, after: cursor, limit: 2)
                listed += page
                guard page.count == 2, let last = page.last else { break }
                cursor = ExpiredWebSubscriptionCursor(expiredAt: last.expiredAt, token: last.token.hex)
            }
            #expect(listed.map(\.token) == [Self.token(2), Self.token(1), Self.token(3)])
            #expect(listed.map(\.expiredAt) == [now - 3 * hour, now - 2 * hour, now - hour])
            #expect(listed.first?.userID == "u2" && listed.first?.topics == ["news"])
            #expect(listed.first?.subscription == Fixtures.subscription(2, expirationTime: now - 3 * hour))

            // Re-subscribed meanwhile without an expiration: no longer expired.
            _ = try await store.register(Self.web(3), app: "a")
            let pruned =
                try await store.pruneExpiredWebSubscriptions(app: "a", expiredBefore: now, limit: 1)
                + store.pruneExpiredWebSubscriptions(app: "a", expiredBefore: now, limit: 1)
            #expect(pruned.map(\.token) == [Self.token(2), Self.token(1)])
            #expect(try await store.pruneExpiredWebSubscriptions(app: "a", expiredBefore: now, limit: 5).isEmpty)
            #expect(try await store.deviceCount(app: "a") == 3)
            #expect(try await store.deviceCount(app: "b") == 1)

            let report = try await store.deadTokenReport(app: "a", since: 0)
            #expect(report.byReason == ["SubscriptionExpired": 2])
            #expect(Set(report.records.map(\.token)) == [Self.token(1), Self.token(2)])
            #expect(report.records.allSatisfy { $0.platform == .web && $0.jobID == nil })
            let events = try await store.client.query(
                "SELECT count(*)::bigint FROM event_outbox WHERE routing_key = 'token.pruned.a'", logger: Self.logger)
            for try await count in events.decode(Int64.self) { #expect(count == 2) }
            // The record keeps the keys (restorable by hand).
            let keys = try await store.client.query(
                "SELECT count(*)::bigint FROM dead_tokens WHERE app_id = 'a' AND web_keys IS NOT NULL",
                logger: Self.logger)
            for try await count in keys.decode(Int64.self) { #expect(count == 2) }
        }
    }
}
