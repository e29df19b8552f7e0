import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// schemas/034 applied to a database that holds 033's devices and dead tokens of both platforms: nothing is lost,
/// the old rules still hold, and web rows are taken after it.
@Suite(.needsServices) struct WebSubscriptionMigrationTests {
    @Test func migration034AppliesOverDevicesOfBothPlatformsAndKeepsThem() async throws {
        let logger = Logger(label: "test.migration034")
        try await TemporaryDatabase.withMigratedStore { store, configuration in
            let name = TestServices.uniqueName("herald_m034")
            try await store.client.query("CREATE DATABASE \(unescaped: name)", logger: logger)
            let migrations = try Migration.load(from: TestServices.schemasDirectory)
            #expect(migrations.contains { $0.version == 34 && $0.name == "034_web_subscriptions.sql" })
            func drop() async {
                _ = try? await store.client.query(
                    "DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)", logger: logger)
            }
            do {
                try await Store.withStore(configuration.with(database: name), logger: logger) { old in
                    let applied = try await old.migrate(migrations.filter { $0.version <= 33 })
                    #expect(applied.last?.version == 33)
                    try await old.client.query(
                        """
                        INSERT INTO devices (app_id, token, platform, fcm_kind, user_id, topics) VALUES
                            ('a', 'abcd', 'ios', NULL, 'u1', '{news}'),
                            ('a', 'cAnd-1:APA91bHun4MxP5egoKMwt2KZ', 'android', 'token', 'u2', '{}'),
                            ('a', 'dIsVQ2QlSSyDRxQaO6LBcb', 'android', 'fid', NULL, '{}')
                        """, logger: logger)
                    try await old.client.query(
                        """
                        INSERT INTO dead_tokens (app_id, token, reason, platform, fcm_kind)
                        VALUES ('a', 'dIsVQ2QlSSyDRxQaO6LBcc', 'UNREGISTERED', 'android', 'fid'),
                               ('a', 'abce', 'Unregistered', 'ios', NULL)
                        """, logger: logger)

                    let now = try await old.migrate(migrations)
                    #expect(now.map(\.version) == migrations.filter { $0.version > 33 }.map(\.version))
                    let devices = try await old.registeredDevicesPage(app: "a", after: nil, limit: 10)
                    #expect(devices.map(\.platform) == [.ios, .android, .android])
                    #expect(devices.map(\.fcmKind) == [nil, .token, .fid])
                    #expect(devices.allSatisfy { $0.webSubscription == nil })
                    #expect(devices.first?.userID == "u1" && devices.first?.topics == ["news"])
                    let report = try await old.deadTokenReport(app: "a", since: 0)
                    #expect(report.total == 2 && report.records.allSatisfy { $0.endpointOrigin == nil })

                    // 033's rules still hold; a web subscription registers after it.
                    await #expect(throws: PSQLError.self) {
                        try await old.client.query(
                            "INSERT INTO devices (app_id, token, platform) VALUES ('a', 'ABCD', 'ios')", logger: logger)
                    }
                    let web = try await old.register(
                        DeviceRegistration(webSubscription: WebSubscriptionFixtures.subscription(1)), app: "a")
                    #expect(web.created && web.device.webSubscription == WebSubscriptionFixtures.subscription(1))
                }
            } catch {
                await drop()
                throw error
            }
            await drop()
        }
    }
}
