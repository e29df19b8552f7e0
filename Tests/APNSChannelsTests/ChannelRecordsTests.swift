import APNSChannels
import APNSSimulator
import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import NIOPosix
import Testing

/// `activity_channels` through the store, and the registry that keeps it and Apple (the simulator) together.
@Suite(.needsServices) struct ChannelRecordsTests {
    static let app = "com.example.scores"

    @Test func recordsAreReadListedCountedAndDeleted() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let ends = Date(timeIntervalSince1970: 1_900_000_000)
            let first = ActivityChannel(
                app: Self.app, id: "Zmlyc3Q=", environment: "sandbox", storagePolicy: 0, label: "final, 'quoted'",
                endsAt: ends)
            let second = ActivityChannel(app: Self.app, id: "c2Vjb25k", environment: "production", storagePolicy: 1)
            #expect(try await store.recordChannel(first))
            #expect(try await store.recordChannel(second))
            #expect(try await !store.recordChannel(first))
            _ = try await store.recordChannel(
                ActivityChannel(app: "com.example.other", id: "Zmlyc3Q=", environment: "sandbox", storagePolicy: 1))

            let read = try #require(try await store.channel(app: Self.app, id: first.id))
            #expect(read.storagePolicy == 0)
            #expect(read.environment == "sandbox")
            #expect(read.label == "final, 'quoted'")
            #expect(read.endsAt == ends)
            #expect(try await store.channel(app: Self.app, id: "bm9uZQ==") == nil)
            #expect(try await store.channels(app: Self.app).map(\.id) == [first.id, second.id])
            #expect(try await store.channelCount(app: Self.app, environment: "sandbox") == 1)
            #expect(try await store.channelCount(app: Self.app, environment: "production") == 1)

            #expect(try await store.deleteChannelRecord(app: Self.app, id: first.id))
            #expect(try await !store.deleteChannelRecord(app: Self.app, id: first.id))
            #expect(try await store.channels(app: Self.app).map(\.id) == [second.id])
            #expect(try await store.channels(app: "com.example.other").count == 1)
        }
    }

    @Test func endedChannelsAreThoseWhoseEndPassed() async throws {
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let now = Date()
            for (id, end) in [("cGFzdA==", now - 60), ("ZnV0dXJl", now + 3600), ("bmV2ZXI=", nil as Date?)] {
                try await store.recordChannel(
                    ActivityChannel(app: Self.app, id: id, environment: "sandbox", storagePolicy: 1, endsAt: end))
            }
            #expect(try await store.endedChannels(app: Self.app, before: now).map(\.id) == ["cGFzdA=="])
            #expect(
                try await store.endedChannels(app: Self.app, before: now + 7200).map(\.id) == ["cGFzdA==", "ZnV0dXJl"])
        }
    }

    @Test func labelsOverTwoHundredCharactersOrWithControlCharactersAreRefused() async throws {
        // Characters, as the schemas' maxLength counts them (schemas/030), not bytes.
        #expect(ActivityChannel.labelProblem(String(repeating: "é", count: 200)) == nil)
        #expect(ActivityChannel.labelProblem(String(repeating: "é", count: 201)) != nil)
        #expect(ActivityChannel.labelProblem("line\nbreak") != nil)
        try await TemporaryDatabase.withMigratedStore { store, _ in
            let long = ActivityChannel(
                app: Self.app, id: "bG9uZw==", environment: "sandbox", storagePolicy: 1,
                label: String(repeating: "x", count: 201))
            await #expect(throws: StoreError.self) { try await store.recordChannel(long) }
            let wide = ActivityChannel(
                app: Self.app, id: "d2lkZQ==", environment: "sandbox", storagePolicy: 1,
                label: String(repeating: "é", count: 200))
            try await store.recordChannel(wide)
            let stored = try await store.channels(app: Self.app)
            #expect(stored.map(\.id) == ["d2lkZQ=="])
        }
    }

    // MARK: The registry: Apple and the records together

    /// Runs `body` with a registry over a migrated store and a simulator.
    static func withRegistry(
        _ configure: (inout APNSSimulatorConfiguration) -> Void = { _ in },
        _ body: (ChannelRegistry, APNSSimulator) async throws -> Void
    ) async throws {
        try await ChannelsFixture.run(configure) { fixture in
            let (apps, directory) = try TestAPNs.appsFile(apps: [Self.app], port: fixture.port)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var app = try #require(apps.app(Self.app))
            app.liveActivities = LiveActivitySettings(
                channelsEndpoint: "https://127.0.0.1:\(fixture.port)",
                broadcastEndpoint: "https://127.0.0.1:\(fixture.port)")
            let client = try APNSChannelsClient(
                app: app, directory: directory, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: Logger(label: "test.channels"))
            do {
                try await TemporaryDatabase.withMigratedStore { store, _ in
                    try await body(ChannelRegistry(app: app, store: store, client: client), fixture.simulator)
                }
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }
    }

    @Test func creatingRecordsTheChannelAppleMade() async throws {
        try await Self.withRegistry { registry, simulator in
            let ends = Date(timeIntervalSince1970: 1_900_000_000)
            let channel = try await registry.create(policy: .noStorage, label: "cup final", endsAt: ends)
            #expect(simulator.channels(bundleID: Self.app).map(\.id) == [channel.id])
            let record = try #require(try await registry.store.channel(app: Self.app, id: channel.id))
            #expect(record.storagePolicy == 0)
            #expect(record.environment == "sandbox")
            #expect(record.label == "cup final")
            #expect(record.endsAt == ends)
        }
    }

    @Test func theQuotaIsCheckedBeforeAskingApple() async throws {
        try await Self.withRegistry { registry, simulator in
            // 10,000 recorded channels in the sandbox, in one statement.
            try await registry.store.client.query(
                """
                INSERT INTO activity_channels (app_id, environment, channel_id, storage_policy)
                SELECT \(Self.app), 'sandbox', 'c' || n, 1 FROM generate_series(1, 10000) AS n
                """, logger: Logger(label: "test"))
            let error = await #expect(throws: APNSChannelsError.self) {
                _ = try await registry.create(policy: .mostRecent, label: nil, endsAt: nil)
            }
            #expect(error?.isQuotaReached == true)
            #expect(error?.status == nil)
            #expect(simulator.counts.isEmpty)
            // Another environment's channels do not count.
            try await registry.store.client.query(
                "UPDATE activity_channels SET environment = 'production' WHERE channel_id = 'c1'",
                logger: Logger(label: "test"))
            _ = try await registry.create(policy: .mostRecent, label: nil, endsAt: nil)
            #expect(simulator.channels(bundleID: Self.app).count == 1)
        }
    }

    @Test func deletingAChannelAppleNoLongerKnowsStillRemovesItsRecord() async throws {
        try await Self.withRegistry { registry, simulator in
            let kept = try await registry.create(policy: .mostRecent, label: nil, endsAt: nil)
            let deleted = try await registry.delete(id: kept.id)
            #expect(deleted == .init(atApple: true, recorded: true))
            #expect(simulator.channels(bundleID: Self.app).isEmpty)

            try await registry.store.recordChannel(
                ActivityChannel(app: Self.app, id: "Z29uZQ==", environment: "sandbox", storagePolicy: 1))
            let gone = try await registry.delete(id: "Z29uZQ==")
            #expect(gone == .init(atApple: false, recorded: true))
            #expect(try await registry.store.channels(app: Self.app).isEmpty)

            let unknown = try await registry.delete(id: "dW5rbm93bg==")
            #expect(unknown == .init(atApple: false, recorded: false))
        }
    }

    @Test func aChannelOfAnotherEnvironmentIsNotDeleted() async throws {
        try await Self.withRegistry { registry, simulator in
            let channel = simulator.addChannel(bundleID: Self.app, messageStoragePolicy: 1)
            try await registry.store.recordChannel(
                ActivityChannel(app: Self.app, id: channel.id, environment: "production", storagePolicy: 1))
            await #expect(throws: ConfigurationError.self) { _ = try await registry.delete(id: channel.id) }
            #expect(simulator.channels(bundleID: Self.app).count == 1)
            #expect(try await registry.store.channel(app: Self.app, id: channel.id) != nil)
        }
    }

    @Test func garbageCollectionDeletesOnlyEndedChannels() async throws {
        try await Self.withRegistry { registry, simulator in
            let ended = try await registry.create(policy: .noStorage, label: nil, endsAt: Date() + 3600)
            let running = try await registry.create(policy: .mostRecent, label: nil, endsAt: Date() + 7200)
            let collected = try await registry.collectGarbage(now: Date() + 5400)
            #expect(collected.map(\.channel.id) == [ended.id])
            #expect(try collected.first?.result.get() == .init(atApple: true, recorded: true))
            #expect(simulator.channels(bundleID: Self.app).map(\.id) == [running.id])
            #expect(try await registry.store.channels(app: Self.app).map(\.id) == [running.id])
        }
    }
}
