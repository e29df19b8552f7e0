import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import Testing
import WebPushCore

/// `herald devices import` of web subscriptions (CSV columns and JSON Lines), `export` of them, and
/// `herald devices expired`, run as the built binary against real PostgreSQL.
@Suite(.needsServices) struct WebDevicesCLITests {
    typealias Fixtures = WebSubscriptionFixtures
    static let app = "com.example.web"
    static let keys = "\(Fixtures.p256dh),\(Fixtures.auth)"

    static func file(_ text: String, extension suffix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("devices") + "." + suffix)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test func aCSVImportsWebRowsBesideTheOthersAndReportsBadRowsByLine() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let ios = String(repeating: "ab", count: 32)
            let csv = [
                "token,user_id,locale,topics,platform,fcm_kind,p256dh,auth,expiration_time",
                "\(Fixtures.endpoint(1)),u1,fr,news,web,,\(Self.keys),1900000000000",
                "\(Fixtures.endpoint(2)),u2,,,web,,\(Self.keys),",
                "\(ios),u3,,,ios,,,,",
                "https://push.example/secret-line-5,,,,web,,,,",  // no keys
                "\(Fixtures.endpoint(6)),,,,web,,AAAA,\(Fixtures.auth),",  // a bad key
            ].joined(separator: "\n")
            let file = try Self.file(csv, extension: "csv")
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await HeraldBinary.run([
                "devices", "import", "--app", Self.app, "--file", file.path, "--database-url",
                HeraldBinary.databaseURL(database),
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("3 imported, 2 rejected"), "\(result.stdout)")
            #expect(result.stderr.contains("rejected line 5: a web subscription needs p256dh and auth"))
            #expect(result.stderr.contains("rejected line 6: p256dh is 3 bytes"))
            #expect(!result.stderr.contains("secret-line") && !result.stderr.contains(Fixtures.p256dh))
            let one = try await store.devices(app: Self.app, tokens: [DeviceToken(trustedHex: Fixtures.endpoint(1))])
            #expect(one.first?.webSubscription == Fixtures.subscription(1, expirationTime: 1_900_000_000_000))

            // Exported with its keys, the file imports the same devices into another app.
            let exported = try await HeraldBinary.run([
                "devices", "export", "--app", Self.app, "--database-url", HeraldBinary.databaseURL(database),
            ])
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(exported.stdout.contains("\(Fixtures.endpoint(2)),u2,,,web,,\(Self.keys),\n"))
            let copy = try Self.file(exported.stdout, extension: "csv")
            defer { try? FileManager.default.removeItem(at: copy) }
            let reimported = try await HeraldBinary.run([
                "devices", "import", "--app", "copy", "--file", copy.path, "--database-url",
                HeraldBinary.databaseURL(database),
            ])
            #expect(reimported.stdout.contains("3 imported, 0 rejected"), "\(reimported.stdout) \(reimported.stderr)")
            let copied = try await store.devicesPage(app: "copy", filter: .all, after: nil, limit: 10)
            let original = try await store.devicesPage(app: Self.app, filter: .all, after: nil, limit: 10)
            #expect(copied.map(\.webSubscription) == original.map(\.webSubscription))
        }
    }

    @Test func aJSONLinesFileImportsSubscriptionsAndReportsEachBadLineByNumber() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            func line(_ n: Int, _ expiration: String = "null") -> String {
                #"{"user_id": "u\#(n)", "topics": ["news"], "subscription": {"endpoint": "\#(Fixtures.endpoint(n))", "expirationTime": \#(expiration), "keys": {"p256dh": "\#(Fixtures.p256dh)", "auth": "\#(Fixtures.auth)"}}}"#
            }
            let lines = [
                line(1, "1900000000000"),
                "",
                #"{"user_id": "u3", "subscription": {"endpoint": "http://push.example/secret"}}"#,
                line(4),
                "{" + String(repeating: " ", count: DeviceJSONLines.maximumLineBytes) + "}",  // too long
                "not json",
                line(7),
            ]
            let file = try Self.file(lines.joined(separator: "\n") + "\n", extension: "jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await HeraldBinary.run([
                "devices", "import", "--app", Self.app, "--file", file.path, "--batch-size", "2", "--database-url",
                HeraldBinary.databaseURL(database),
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("3 imported, 3 rejected"), "\(result.stdout)")
            #expect(result.stderr.contains("rejected line 3: subscription.keys is required"), "\(result.stderr)")
            #expect(result.stderr.contains("rejected line 5: the line is 65538 bytes; at most 65536"))
            #expect(result.stderr.contains("rejected line 6: the line is not a JSON object"))
            #expect(!result.stderr.contains("secret"))
            let page = try await store.devicesPage(
                app: Self.app, filter: .users(["u1", "u4", "u7"]), after: nil, limit: 10)
            #expect(page.count == 3)
            #expect(page.allSatisfy { $0.platform == .web && $0.webSubscription?.keys.auth.count == 16 })
            #expect(
                page.first { $0.token.hex == Fixtures.endpoint(1) }?.webSubscription?.expirationTime
                    == 1_900_000_000_000)

            // --format jsonl reads a file of any name that way; the CSV reader would refuse its first line.
            let other = try Self.file(line(8), extension: "txt")
            defer { try? FileManager.default.removeItem(at: other) }
            let forced = try await HeraldBinary.run([
                "devices", "import", "--app", Self.app, "--file", other.path, "--format", "jsonl", "--database-url",
                HeraldBinary.databaseURL(database),
            ])
            #expect(forced.stdout.contains("1 imported, 0 rejected"), "\(forced.stdout) \(forced.stderr)")
        }
    }

    @Test func devicesExpiredListsPassedSubscriptionsAndPrunesThemAsSubscriptionExpired() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let now = try await store.databaseNow()
            _ = try await store.importDevices(
                [
                    DeviceRecord(
                        webSubscription: Fixtures.subscription(1, expirationTime: now - 3_600_000), userID: "u1",
                        topics: ["a", "b"]),
                    DeviceRecord(webSubscription: Fixtures.subscription(2, expirationTime: now + 3_600_000_000)),
                    DeviceRecord(webSubscription: Fixtures.subscription(3)),
                ], app: Self.app)
            let listed = try await HeraldBinary.run(["devices", "expired", "--app", Self.app, "--database-url", url])
            #expect(listed.status == 0, "\(listed.stderr)")
            let lines = listed.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "token,endpoint_origin,user_id,locale,topics,expired_at,registered_at")
            #expect(lines.count == 2)
            #expect(
                lines.last?.hasPrefix("\(Fixtures.endpoint(1)),https://updates.push.services.mozilla.com,u1,,a;b,")
                    == true)
            #expect(listed.stderr.contains("devices expired: 1 web subscriptions expired before"))
            #expect(try await store.deviceCount(app: Self.app) == 3)

            let pruned = try await HeraldBinary.run([
                "devices", "expired", "--app", Self.app, "--prune", "--page-size", "1", "--database-url", url,
            ])
            #expect(pruned.status == 0, "\(pruned.stderr)")
            #expect(pruned.stdout.split(separator: "\n").count == 2)
            #expect(pruned.stderr.contains("pruned (dead tokens, reason SubscriptionExpired)"))
            #expect(try await store.deviceCount(app: Self.app) == 2)
            let report = try await store.deadTokenReport(app: Self.app, since: 0)
            #expect(report.byReason == ["SubscriptionExpired": 1])
            #expect(report.records.first?.endpointOrigin == "https://updates.push.services.mozilla.com")
            let again = try await HeraldBinary.run(["devices", "expired", "--app", Self.app, "--database-url", url])
            #expect(again.stdout.split(separator: "\n").count == 1)
        }
    }
}
