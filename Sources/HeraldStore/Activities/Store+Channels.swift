import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// A Live Activity broadcast channel Herald created at Apple, as `activity_channels` records it.
public struct ActivityChannel: Sendable, Hashable {
    /// The app id (the apps file's).
    public var app: String
    /// Apple's channel id (base64).
    public var id: String
    /// `production` or `sandbox`: where the channel lives (a channel belongs to one environment).
    public var environment: String
    /// Apple's `message-storage-policy`: 0 stores no message, 1 the most recent one.
    public var storagePolicy: Int
    /// The operator's note, at most ``maximumLabelCharacters`` characters (schemas/030).
    public var label: String?
    /// When the event ends; after it the channel may be garbage-collected.
    public var endsAt: Date?
    /// When Herald recorded it.
    public var createdAt: Date

    /// The longest label, in UTF-8 bytes.
    public static let maximumLabelCharacters = 200

    public init(
        app: String, id: String, environment: String, storagePolicy: Int, label: String? = nil, endsAt: Date? = nil,
        createdAt: Date = HeraldClock.system.date
    ) {
        self.app = app
        self.id = id
        self.environment = environment
        self.storagePolicy = storagePolicy
        self.label = label
        self.endsAt = endsAt
        self.createdAt = createdAt
    }

    /// Why `label` cannot be stored, or nil: empty, over ``maximumLabelCharacters`` characters (schemas/030) or with
    /// a control character.
    public static func labelProblem(_ label: String) -> String? {
        if label.isEmpty { return "the label is empty" }
        if label.unicodeScalars.count > maximumLabelCharacters {
            return "the label is longer than \(maximumLabelCharacters) characters"
        }
        if label.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            return "the label contains a control character"
        }
        return nil
    }
}

extension Store {
    private static let channelColumns =
        "app_id, channel_id, environment, storage_policy, label, ends_at, created_at"

    /// Records a channel Apple just created. Returns false, changing nothing, if the app already records that id.
    @discardableResult
    public func recordChannel(_ channel: ActivityChannel) async throws(StoreError) -> Bool {
        if let label = channel.label, let problem = ActivityChannel.labelProblem(label) {
            throw StoreError.permanent(.queryFailed, "recording a channel failed: \(problem)")
        }
        guard channel.environment == "production" || channel.environment == "sandbox" else {
            throw StoreError.permanent(.queryFailed, "recording a channel failed: the environment is not known")
        }
        guard channel.storagePolicy == 0 || channel.storagePolicy == 1 else {
            throw StoreError.permanent(.queryFailed, "recording a channel failed: the storage policy is not 0 or 1")
        }
        let policy = Int16(channel.storagePolicy)
        return try await run("recording a channel") {
            let rows = try await client.query(
                """
                INSERT INTO activity_channels (app_id, channel_id, environment, storage_policy, label, ends_at)
                VALUES (\(channel.app), \(channel.id), \(channel.environment), \(policy), \(channel.label),
                        \(channel.endsAt))
                ON CONFLICT (app_id, channel_id) DO NOTHING
                RETURNING 1
                """,
                logger: logger
            )
            for try await _ in rows.decode(Int.self) { return true }
            return false
        }
    }

    /// The recorded channel `id` of `app`, if any.
    public func channel(app: String, id: String) async throws(StoreError) -> ActivityChannel? {
        try await run("reading a channel") {
            let rows = try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM activity_channels
                WHERE app_id = \(app) AND channel_id = \(id)
                """,
                logger: logger
            )
            return try await Self.channels(from: rows).first
        }
    }

    /// Every recorded channel of `app`, oldest first.
    public func channels(app: String) async throws(StoreError) -> [ActivityChannel] {
        try await run("listing channels") {
            let rows = try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM activity_channels
                WHERE app_id = \(app) ORDER BY created_at, channel_id
                """,
                logger: logger
            )
            return try await Self.channels(from: rows)
        }
    }

    /// How many channels `app` records in `environment`: what counts against Apple's limit of 10,000.
    public func channelCount(app: String, environment: String) async throws(StoreError) -> Int {
        try await run("counting channels") {
            let rows = try await client.query(
                "SELECT count(*) FROM activity_channels WHERE app_id = \(app) AND environment = \(environment)",
                logger: logger
            )
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    /// Forgets channel `id` of `app`. Returns whether it was recorded.
    @discardableResult
    public func deleteChannelRecord(app: String, id: String) async throws(StoreError) -> Bool {
        try await run("deleting a channel record") {
            let rows = try await client.query(
                "DELETE FROM activity_channels WHERE app_id = \(app) AND channel_id = \(id) RETURNING 1",
                logger: logger
            )
            for try await _ in rows.decode(Int.self) { return true }
            return false
        }
    }

    /// The channels of `app` whose event ended before `before` (`ends_at` earlier than it), soonest ended first:
    /// what `herald channels gc` deletes.
    public func endedChannels(app: String, before: Date) async throws(StoreError) -> [ActivityChannel] {
        try await run("listing ended channels") {
            let rows = try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM activity_channels
                WHERE app_id = \(app) AND ends_at IS NOT NULL AND ends_at < \(before)
                ORDER BY ends_at, channel_id
                """,
                logger: logger
            )
            return try await Self.channels(from: rows)
        }
    }

    private static func channels(from rows: PostgresRowSequence) async throws -> [ActivityChannel] {
        var channels: [ActivityChannel] = []
        for try await (app, id, environment, policy, label, endsAt, createdAt) in rows.decode(
            (String, String, String, Int16, String?, Date?, Date).self
        ) {
            channels.append(
                ActivityChannel(
                    app: app, id: id, environment: environment, storagePolicy: Int(policy), label: label,
                    endsAt: endsAt, createdAt: createdAt))
        }
        return channels
    }
}
