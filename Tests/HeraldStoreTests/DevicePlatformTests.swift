import APNSCore
import FCMCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// Devices of both platforms (schemas/033, issue 36): what the registry keeps of an Android device, the rules its
/// columns hold every token to, and where the platform travels (reads, replacement, prunes, reports, events,
/// restores, the stale listing).
@Suite(.needsServices) struct DevicePlatformTests {
    static let logger = Logger(label: "test.platforms")

    static func iosToken(_ n: Int) -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: "a1" + String(repeating: "0", count: 62 - hex.count) + hex)
    }

    /// A registration token as FCM issues them: mixed case, `:`, `-` and `_`.
    static func androidToken(_ n: Int) -> DeviceToken {
        DeviceToken(trustedHex: "cAnd-\(n):APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_Ab\(n)")
    }

    /// A Firebase Installation ID: 22 base64url characters, the first one of c d e f.
    static func fid(_ n: Int) -> DeviceToken {
        let digits = String(n)
        return DeviceToken(trustedHex: "dIsVQ2QlSSyDRxQaO6L" + String(repeating: "x", count: 3 - digits.count) + digits)
    }

    static func android(_ token: DeviceToken, kind: FCMTarget.Kind = .token, user: String? = nil) -> DeviceRegistration
    {
        DeviceRegistration(
            token: token, userID: user.map { .set($0) } ?? .keep, topics: .set(["news"]), platform: .android,
            fcmKind: kind)
    }

    @Test func androidDevicesOfBothKindsAreRegisteredImportedAndReadWithTheirPlatform() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let registered = try await store.register(Self.android(Self.androidToken(1), user: "u1"), app: "a")
            #expect(registered.created)
            #expect(registered.device.platform == .android && registered.device.fcmKind == .token)
            #expect(registered.device.token == Self.androidToken(1))
            let fid = try await store.register(Self.android(Self.fid(1), kind: .fid, user: "u1"), app: "a")
            #expect(fid.device.platform == .android && fid.device.fcmKind == .fid)
            _ = try await store.register(
                DeviceRegistration(token: Self.iosToken(1), userID: .set("u1"), topics: .set(["news"])), app: "a")
            let imported = try await store.importDevicesCounting(
                [
                    DeviceRecord(token: Self.androidToken(2), userID: "u2", topics: ["news"], platform: .android),
                    DeviceRecord(
                        token: Self.fid(2), userID: "u2", topics: ["news"], platform: .android, fcmKind: .fid),
                    DeviceRecord(token: Self.iosToken(2), userID: "u2", topics: ["news"]),
                ], app: "a")
            #expect(imported == DeviceImportCounts(written: 3, platformConflicts: 0))

            let expected: [DeviceToken: (DevicePlatform, FCMTarget.Kind?)] = [
                Self.androidToken(1): (.android, .token), Self.androidToken(2): (.android, .token),
                Self.fid(1): (.android, .fid), Self.fid(2): (.android, .fid),
                Self.iosToken(1): (.ios, nil), Self.iosToken(2): (.ios, nil),
            ]
            func check(_ devices: [StoredDevice], _ read: String) {
                #expect(Set(devices.map(\.token)) == Set(expected.keys), "\(read)")
                for device in devices {
                    #expect(device.platform == expected[device.token]?.0, "\(read)")
                    #expect(device.fcmKind == expected[device.token]?.1, "\(read)")
                }
            }
            check(try await store.devices(app: "a", tokens: Array(expected.keys)), "devices(app:tokens:)")
            for filter in [DeviceFilter.all, .topic("news"), .users(["u1", "u2"])] {
                for details in [true, false] {
                    check(
                        try await store.devicesPage(
                            app: "a", filter: filter, after: nil, limit: 10, withDetails: details),
                        "\(filter), details \(details)")
                }
            }
            let page = try await store.registeredDevicesPage(app: "a", after: nil, limit: 10)
            #expect(page.count == 6)
            for device in page {
                #expect(device.platform == expected[device.token]?.0 && device.fcmKind == expected[device.token]?.1)
            }
            let one = try #require(try await store.device(app: "a", token: Self.fid(2)))
            #expect(one.platform == .android && one.fcmKind == .fid && one.userID == "u2")
        }
    }

    @Test(
        arguments: [
            // platform, fcm_kind, token: each refused by the column's rules
            ("ios", nil, "ABCDEF00"),  // upper case: iOS tokens are kept as lowercase hex
            ("ios", nil, "abc"),  // an odd number of digits
            ("ios", nil, String(repeating: "ab", count: 201)),  // over 200 bytes
            ("ios", "token", "abcdef00"),  // an iOS device has no kind
            ("android", nil, "cAnd-1:APA91bHun4MxP5egoKMwt"),  // an Android device has one
            ("android", "token", "short:token"),  // under 20 characters
            ("android", "token", "cAnd-1:APA91bHun4MxP5 egoKMwt"),  // a space
            ("android", "token", String(repeating: "a", count: 4097)),  // over 4096
            ("android", "fid", "dIsVQ2QlSSyDRxQaO6L:cb"),  // no colon in an installation id
            ("android", "fid", "aIsVQ2QlSSyDRxQaO6LBcb"),  // the first character is one of c d e f
            ("android", "fid", "dIsVQ2QlSSyDRxQaO6LBcbb"),  // 23 characters
            ("android", "apns", "cAnd-1:APA91bHun4MxP5egoKMwt"),  // an unknown kind
            ("windows", nil, "abcdef00"),  // an unknown platform
        ] as [(String, String?, String)])
    func theColumnsRefuseATokenThatBreaksItsPlatformsRule(platform: String, kind: String?, token: String)
        async throws
    {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            await #expect(throws: PSQLError.self) {
                try await store.client.query(
                    "INSERT INTO devices (app_id, token, platform, fcm_kind) VALUES ('a', \(token), \(platform), \(kind))",
                    logger: Self.logger)
            }
            let count = try await store.deviceCount(app: "a")
            #expect(count == 0)
            // The dead-token records hold their platform to the same pairs.
            if platform == "windows" || kind == "apns" || (platform == "ios") != (kind == nil) {
                await #expect(throws: PSQLError.self) {
                    try await store.client.query(
                        """
                        INSERT INTO dead_tokens (app_id, token, reason, platform, fcm_kind)
                        VALUES ('a', \(token), 'Stale', \(platform), \(kind))
                        """,
                        logger: Self.logger)
                }
            }
        }
    }

    @Test func theColumnsTakeEveryPlatformsTokensAtTheirBounds() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let rows: [(String, String?, String)] = [
                ("ios", nil, "ab"), ("ios", nil, String(repeating: "ab", count: 200)),
                ("android", "token", String(repeating: "a", count: 20)),
                ("android", "token", "-" + String(repeating: "A:_", count: 1365)),
                ("android", "fid", "f" + String(repeating: "-", count: 21)),
            ]
            for (platform, kind, token) in rows {
                try await store.client.query(
                    "INSERT INTO devices (app_id, token, platform, fcm_kind) VALUES ('a', \(token), \(platform), \(kind))",
                    logger: Self.logger)
            }
            #expect(try await store.deviceCount(app: "a") == rows.count)
            // A device registered before schemas/033 is iOS: the default.
            try await store.client.query(
                "INSERT INTO devices (app_id, token) VALUES ('b', 'abcd')", logger: Self.logger)
            #expect(
                try await store.devices(app: "b", tokens: [DeviceToken(trustedHex: "abcd")]).first?.platform == .ios)
        }
    }

    @Test func aRegistrationNeverChangesATokensPlatformOrKind() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            // 40 hex digits: an iOS token, and by its characters and length an Android registration token too.
            let shared = DeviceToken(trustedHex: String(repeating: "ab12", count: 10))
            _ = try await store.register(DeviceRegistration(token: shared, userID: .set("u1")), app: "a")
            // 22 characters starting with d: an installation id, and by its characters a registration token too.
            _ = try await store.register(DeviceRegistration(token: Self.fid(1), platform: .android), app: "a")
            // Hex, registered as an Android registration token.
            let hexAndroid = DeviceToken(trustedHex: String(repeating: "cd34", count: 10))
            _ = try await store.register(DeviceRegistration(token: hexAndroid, platform: .android), app: "a")
            let conflicts = [
                (DeviceRegistration(token: shared, platform: .android), "an iOS device"),
                (DeviceRegistration(token: Self.fid(1), platform: .android, fcmKind: .fid), "fcm_kind token"),
                (DeviceRegistration(token: hexAndroid), "an Android device addressed by registration token"),
            ]
            for (registration, registered) in conflicts {
                await #expect {
                    _ = try await store.register(registration, app: "a")
                } throws: { error in
                    guard let error = error as? StoreError else { return false }
                    return error.code == .platformConflict && !error.isTransient
                        && error.message.hasPrefix("the token is registered as") && error.message.contains(registered)
                        && !error.message.contains(registration.token.hex)
                }
            }
            // Nothing changed.
            let ios = try #require(try await store.device(app: "a", token: shared))
            #expect(ios.platform == .ios && ios.userID == "u1")
            #expect(try await store.device(app: "a", token: Self.fid(1))?.fcmKind == .token)
            // The same platform refreshes as before; the same token in another app is another device.
            #expect(try await store.register(DeviceRegistration(token: shared), app: "a").created == false)
            #expect(
                try await store.register(DeviceRegistration(token: shared, platform: .android), app: "b").device
                    .platform == .android)

            // An import leaves a conflicting row as it was and counts it.
            let counts = try await store.importDevicesCounting(
                [
                    DeviceRecord(token: shared, userID: "imported", platform: .android),
                    DeviceRecord(token: Self.fid(1), userID: "imported", platform: .android),
                ], app: "a")
            #expect(counts == DeviceImportCounts(written: 1, platformConflicts: 1))
            #expect(try await store.device(app: "a", token: shared)?.userID == "u1")
            #expect(try await store.device(app: "a", token: Self.fid(1))?.userID == "imported")
        }
    }

    @Test func aReplacementStaysOnItsPlatformAndMayMoveAnAndroidDeviceToItsInstallationID() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            _ = try await store.register(Self.android(Self.androidToken(1), user: "u1"), app: "a")
            // The app moves to installation ids: the FID replaces the registration token, fields carried over.
            var moved = Self.android(Self.fid(1), kind: .fid)
            moved.topics = .keep
            moved.oldToken = Self.androidToken(1)
            let result = try await store.register(moved, app: "a")
            #expect(result.replaced && result.created)
            #expect(result.device.platform == .android && result.device.fcmKind == .fid)
            #expect(result.device.userID == "u1" && result.device.topics == ["news"])
            #expect(try await store.device(app: "a", token: Self.androidToken(1)) == nil)

            // An old token of the other platform is not replaced: a conflict naming old_token, nothing written.
            _ = try await store.register(DeviceRegistration(token: Self.iosToken(1), userID: .set("u2")), app: "a")
            let fromIOS = DeviceRegistration(
                token: Self.androidToken(2), oldToken: Self.iosToken(1), platform: .android)
            await #expect {
                _ = try await store.register(fromIOS, app: "a")
            } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .platformConflict && error.message.hasPrefix("the old_token is registered as")
                    && error.message.contains("an iOS device")
            }
            #expect(try await store.device(app: "a", token: Self.iosToken(1))?.userID == "u2")
            #expect(try await store.device(app: "a", token: Self.androidToken(2)) == nil)
            // The old token is looked up in the app only: another app's device of that token is not touched.
            _ = try await store.register(Self.android(Self.androidToken(3), user: "elsewhere"), app: "b")
            var other = Self.android(Self.androidToken(4))
            other.oldToken = Self.androidToken(3)
            #expect(try await store.register(other, app: "a").replaced == false)
            #expect(try await store.device(app: "b", token: Self.androidToken(3))?.userID == "elsewhere")
        }
    }

    @Test func aPrunedAndroidDeviceIsReportedAnnouncedAndRestoredWithItsPlatform() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.setEventApps(with: ["a"], without: [])
            _ = try await store.register(Self.android(Self.androidToken(1), user: "u1"), app: "a")
            _ = try await store.register(Self.android(Self.fid(1), kind: .fid), app: "a")
            _ = try await store.register(DeviceRegistration(token: Self.iosToken(1)), app: "a")
            _ = try await store.startJob(id: "j", app: "a", targetKind: "all")
            var writeBack = WriteBack(jobID: "j", app: "a")
            writeBack.targeted = 3
            writeBack.prunes = [Self.androidToken(1), Self.fid(1), Self.iosToken(1)].map {
                .init(token: $0, reason: "Unregistered", apnsTimestamp: nil)
            }
            #expect(try await store.write(writeBack) == 3)

            let report = try await store.deadTokenReport(app: "a", since: 0)
            let byToken = Dictionary(uniqueKeysWithValues: report.records.map { ($0.token, $0) })
            #expect(byToken[Self.androidToken(1)]?.platform == .android)
            #expect(byToken[Self.androidToken(1)]?.fcmKind == .token)
            #expect(byToken[Self.fid(1)]?.platform == .android && byToken[Self.fid(1)]?.fcmKind == .fid)
            #expect(byToken[Self.iosToken(1)]?.platform == .ios && byToken[Self.iosToken(1)]?.fcmKind == nil)

            // token.pruned names each token's platform (and an Android token's kind).
            let rows = try await store.client.query(
                "SELECT body::text FROM event_outbox WHERE routing_key = 'token.pruned.a'", logger: Self.logger)
            var bodies: [String] = []
            for try await body in rows.decode(String.self) { bodies.append(body) }
            let event = try #require(bodies.first.map { Data($0.utf8) })
            let object = try #require(try JSONSerialization.jsonObject(with: event) as? [String: Any])
            let entries = try #require(object["tokens"] as? [[String: String]])
            #expect(
                Set(entries) == [
                    [
                        "token": Self.androidToken(1).hex, "reason": "Unregistered", "platform": "android",
                        "fcm_kind": "token",
                    ],
                    ["token": Self.fid(1).hex, "reason": "Unregistered", "platform": "android", "fcm_kind": "fid"],
                    ["token": Self.iosToken(1).hex, "reason": "Unregistered", "platform": "ios"],
                ])

            // The restore puts each back on its platform.
            #expect(
                try await store.restorePrunedDevices(JobKey(app: "a", id: "j"))
                    == DeviceRestoration(restored: 3, skipped: 0, unrestorable: 0))
            let restored = try await store.devices(
                app: "a", tokens: [Self.androidToken(1), Self.fid(1), Self.iosToken(1)])
            #expect(restored.count == 3)
            for device in restored {
                let expected: (DevicePlatform, FCMTarget.Kind?) =
                    device.token == Self.iosToken(1)
                    ? (.ios, nil) : (.android, device.token == Self.fid(1) ? .fid : .token)
                #expect(device.platform == expected.0 && device.fcmKind == expected.1)
            }
            #expect(try await store.device(app: "a", token: Self.androidToken(1))?.userID == "u1")
        }
    }

    /// Moves a device's registration time `days` into the past.
    static func age(_ token: DeviceToken, days: Int, app: String = "a", store: Store) async throws {
        try await store.client.query(
            """
            UPDATE devices SET registered_at = now() - \(days)::bigint * interval '1 day'
            WHERE app_id = \(app) AND token = \(token.hex)
            """,
            logger: logger)
    }

    @Test func staleAndroidDevicesAreListedOldestFirstAndPrunedAsStaleDeadTokens() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            try await store.setEventApps(with: ["a"], without: [])
            // Five stale Android devices (40 to 200 days), two fresh ones, an old iOS device, another app's.
            for n in 0..<7 {
                let kind: FCMTarget.Kind = n % 2 == 0 ? .token : .fid
                _ = try await store.register(
                    Self.android(kind == .fid ? Self.fid(n) : Self.androidToken(n), kind: kind, user: "u\(n)"), app: "a"
                )
            }
            let stale = [Self.androidToken(0), Self.fid(1), Self.androidToken(2), Self.fid(3), Self.androidToken(4)]
            for (index, token) in stale.enumerated() { try await Self.age(token, days: 200 - index * 40, store: store) }
            _ = try await store.register(DeviceRegistration(token: Self.iosToken(1)), app: "a")
            try await Self.age(Self.iosToken(1), days: 300, store: store)
            _ = try await store.register(Self.android(Self.androidToken(9)), app: "b")
            try await Self.age(Self.androidToken(9), days: 300, app: "b", store: store)

            let cutoff = try await store.staleCutoff(olderThan: .seconds(30 * 86_400))
            // Pages of two, oldest first, each after the last one's (registration time, token).
            var listed: [StaleDevice] = []
            var cursor: StaleDeviceCursor? = nil
            while true {
                let page = try await store.staleDevicesPage(app: "a", registeredBefore: cutoff, after: cursor, limit: 2)
                listed += page
                guard page.count == 2, let last = page.last else { break }
                cursor = StaleDeviceCursor(registeredAt: last.registeredAt, token: last.token.hex)
            }
            #expect(listed.map(\.token) == stale)
            #expect(listed.map(\.fcmKind) == [.token, .fid, .token, .fid, .token])
            #expect(listed.first?.userID == "u0" && listed.first?.topics == ["news"])
            #expect(listed.map(\.registeredAt) == listed.map(\.registeredAt).sorted())

            // A re-registration refreshes a device: it is no longer stale.
            _ = try await store.register(Self.android(Self.androidToken(4)), app: "a")
            let pruned =
                try await store.pruneStaleDevices(app: "a", registeredBefore: cutoff, limit: 3)
                + store.pruneStaleDevices(app: "a", registeredBefore: cutoff, limit: 3)
            #expect(pruned.map(\.token) == Array(stale.prefix(4)))
            #expect(try await store.pruneStaleDevices(app: "a", registeredBefore: cutoff, limit: 3).isEmpty)
            #expect(try await store.deviceCount(app: "a") == 4)  // three fresh Android devices and the iOS one
            #expect(try await store.deviceCount(app: "b") == 1)

            let report = try await store.deadTokenReport(app: "a", since: 0)
            #expect(report.byReason == ["Stale": 4])
            #expect(Set(report.records.map(\.token)) == Set(stale.prefix(4)))
            #expect(report.records.allSatisfy { $0.platform == .android && $0.jobID == nil })
            let events = try await store.client.query(
                "SELECT count(*)::bigint FROM event_outbox WHERE routing_key = 'token.pruned.a'", logger: Self.logger)
            for try await count in events.decode(Int64.self) { #expect(count == 2) }
        }
    }

    @Test func theStaleListingReadsTheAndroidIndexInOrder() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let rows = try await store.client.query(
                """
                SELECT indexdef FROM pg_indexes WHERE tablename = 'devices' AND indexname = 'devices_android_by_registration'
                """,
                logger: Self.logger)
            var definitions: [String] = []
            for try await definition in rows.decode(String.self) { definitions.append(definition) }
            #expect(definitions.count == 1)
            #expect(
                definitions.first?.contains("(app_id, registered_at, token) WHERE (platform = 'android'::text)") == true
            )
        }
    }
}
