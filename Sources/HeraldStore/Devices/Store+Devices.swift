import APNSCore
import FCMCore
import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import WebPushCore

/// A device row as the deliverer needs it.
public struct StoredDevice: Sendable, Hashable {
    public var token: DeviceToken
    public var locale: String?
    /// Microseconds since 1970: what the 410 timestamp rule compares against.
    public var registeredAt: Int64
    /// The APNs environment the device registered with (`production`, `sandbox`), if any.
    public var environment: String?
    /// Which provider reaches the device.
    public var platform: DevicePlatform
    /// For an Android device, the field its token goes in (`token` or `fid`); nil for iOS.
    public var fcmKind: FCMTarget.Kind?
    /// For a web device, its subscription (the token is its endpoint); nil for the other platforms, and for a web
    /// token listed in a job that is not registered (it cannot be encrypted for).
    public var webSubscription: WebPushSubscription?

    public init(
        token: DeviceToken, locale: String?, registeredAt: Int64, environment: String? = nil,
        platform: DevicePlatform = .ios, fcmKind: FCMTarget.Kind? = nil, webSubscription: WebPushSubscription? = nil
    ) {
        self.token = token
        self.locale = locale
        self.registeredAt = registeredAt
        self.environment = environment
        self.platform = platform
        self.fcmKind = fcmKind
        self.webSubscription = webSubscription
    }
}

/// Which devices of an app a page query walks.
public enum DeviceFilter: Sendable, Hashable {
    case users([String])
    case topic(String)
    case all
    /// `topic` or `all`, narrowed to devices whose locale falls under one of the tags (`fr` covers `fr-CA`).
    indirect case locales(DeviceFilter, [String])
}

/// What an import wrote.
public struct DeviceImportCounts: Sendable, Hashable {
    /// Rows written: new devices and refreshed ones.
    public var written: Int
    /// Rows left as they were because their token is registered on the other platform (or as the other kind of
    /// Android identifier): an import never changes a device's platform.
    public var platformConflicts: Int

    public init(written: Int, platformConflicts: Int) {
        self.written = written
        self.platformConflicts = platformConflicts
    }
}

extension Store {
    /// Upserts devices with PostgreSQL COPY into a temporary table, then one `INSERT … ON CONFLICT`: a re-imported
    /// device is refreshed (its registration time moves on). Returns the number of rows written.
    public func importDevices(_ devices: [DeviceRecord], app: String) async throws(StoreError) -> Int {
        try await importDevicesCounting(devices, app: app).written
    }

    /// `importDevices`, also counting the rows refused because their token is registered on another platform (or
    /// as another kind of Android identifier): those devices are left as they were.
    public func importDevicesCounting(_ devices: [DeviceRecord], app: String) async throws(StoreError)
        -> DeviceImportCounts
    {
        guard !devices.isEmpty else { return DeviceImportCounts(written: 0, platformConflicts: 0) }
        return try await run("importing devices", code: .importFailed) {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    CREATE TEMPORARY TABLE device_import (
                        token text NOT NULL, user_id text, locale text, topics text[] NOT NULL,
                        platform text NOT NULL, fcm_kind text,
                        seq bigint GENERATED ALWAYS AS IDENTITY) ON COMMIT DROP
                    """,
                    logger: logger
                )
                try await connection.copyFrom(
                    table: "device_import",
                    columns: ["token", "user_id", "locale", "topics", "platform", "fcm_kind"],
                    logger: logger
                ) { writer in
                    var buffer = ByteBuffer()
                    buffer.reserveCapacity(64 * 1024)
                    for device in devices {
                        CopyText.appendRow(
                            [
                                device.token.hex, device.userID, device.locale, CopyText.arrayLiteral(device.topics),
                                device.platform.rawValue,
                                device.platform == .android ? (device.fcmKind ?? .token).rawValue : nil,
                            ],
                            to: &buffer
                        )
                        if buffer.readableBytes >= 60 * 1024 {
                            try await writer.write(buffer)
                            buffer.clear()
                        }
                    }
                    if buffer.readableBytes > 0 { try await writer.write(buffer) }
                }
                let rows = try await connection.query(
                    """
                    WITH incoming AS (
                        SELECT DISTINCT ON (token) token, user_id, locale, topics, platform, fcm_kind
                        FROM device_import
                        ORDER BY token, seq DESC),  -- a token listed twice: the later row wins
                    upserted AS (
                        INSERT INTO devices AS d (app_id, token, user_id, locale, topics, registered_at, platform,
                                                  fcm_kind)
                        SELECT \(app), token, user_id, locale, topics, now(), platform, fcm_kind FROM incoming
                        ORDER BY token
                        ON CONFLICT (app_id, token) DO UPDATE SET
                            user_id = EXCLUDED.user_id, locale = EXCLUDED.locale, topics = EXCLUDED.topics,
                            registered_at = now(), badge = 0
                        -- never a change of platform or kind: that row stays as it was, and is counted apart
                        WHERE d.platform = EXCLUDED.platform AND d.fcm_kind IS NOT DISTINCT FROM EXCLUDED.fcm_kind
                        RETURNING 1)
                    SELECT (SELECT count(*) FROM upserted)::bigint, (SELECT count(*) FROM incoming)::bigint
                    """,
                    logger: logger
                )
                var counts = DeviceImportCounts(written: 0, platformConflicts: 0)
                for try await (written, incoming) in rows.decode((Int64, Int64).self) {
                    counts = DeviceImportCounts(written: Int(written), platformConflicts: Int(incoming - written))
                }
                return counts
            }
        }
    }

    /// Refreshes the planner's statistics of the devices table: the last step of a bulk import
    /// (`herald devices import`). Until the table is analysed, PostgreSQL plans the audience of the first jobs with
    /// the statistics it had before the load (none at all on a new deployment) or waits for autovacuum to take them.
    ///
    /// Cheap and bounded: ANALYZE reads a sample of a fixed size (30,000 rows at the default statistics target)
    /// whatever the size of the table, and it waits at most 10 s for its lock, which only maintenance of the table
    /// (VACUUM, another ANALYZE, an index build) holds for long. Only the table's owner can analyse it: for another
    /// role PostgreSQL skips the table with a warning, and autovacuum analyses it later.
    public func analyzeDevices() async throws(StoreError) {
        let started = ContinuousClock.now
        try await run("analysing devices") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.setForTransaction([("lock_timeout", "10s")], logger: logger)
                try await connection.query("ANALYZE devices", logger: logger)
            }
        }
        logger.debug("analysed devices", metadata: ["duration": "\(started.duration(to: .now))"])
    }

    /// The registered devices among `tokens` (unknown tokens are simply absent).
    public func devices(app: String, tokens: [DeviceToken]) async throws(StoreError) -> [StoredDevice] {
        guard !tokens.isEmpty else { return [] }
        let hex = tokens.map(\.hex)
        return try await run("looking up devices") {
            let rows = try await client.query(
                """
                SELECT token, locale, (extract(epoch FROM registered_at) * 1000000)::bigint, environment, platform,
                       fcm_kind
                FROM devices WHERE app_id = \(app) AND token = ANY(\(hex))
                """,
                logger: logger
            )
            return try await Self.collect(rows)
        }
    }

    /// One keyset page of an app's devices matching `filter`, in token order: `after < token ≤ through`.
    ///
    /// - Parameter withDetails: false reads the tokens with their platforms alone (locale, registeredAt and
    ///   environment left empty): what a batch whose payload is the same for every device, of an app serving one
    ///   environment, needs, at a fraction of the cost of decoding six columns per row. Every device comes with its
    ///   platform and FCM kind either way: the worker chooses its provider by them.
    public func devicesPage(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String? = nil,
        limit: Int,
        withDetails: Bool = true
    ) async throws(StoreError) -> [StoredDevice] {
        try await run("reading a page of devices") {
            let rows = try await client.query(
                Self.devicesPageQuery(
                    app: app, filter: filter, after: after, through: through, limit: limit, withDetails: withDetails),
                logger: logger
            )
            var devices: [StoredDevice] = []
            devices.reserveCapacity(limit)
            if withDetails {
                devices = try await Self.collect(rows)
            } else {
                for try await (token, platform, kind) in rows.decode((String, String, String?).self) {
                    devices.append(
                        StoredDevice(
                            token: DeviceToken(trustedHex: token), locale: nil, registeredAt: 0,
                            platform: Self.platform(platform), fcmKind: Self.fcmKind(kind)))
                }
            }
            return devices
        }
    }

    /// How many devices the page after `after` would hold (at most `limit`) and its last token, without reading
    /// the page: what the planner needs to cut a batch.
    public func devicesPageBoundary(
        app: String,
        filter: DeviceFilter,
        after: String?,
        limit: Int
    ) async throws(StoreError) -> (count: Int, last: String?) {
        try await run("measuring a page of devices") {
            let rows = try await client.query(
                Self.devicesPageBoundaryQuery(app: app, filter: filter, after: after, limit: limit), logger: logger)
            for try await (count, last) in rows.decode((Int64, String?).self) { return (Int(count), last) }
            return (0, nil)
        }
    }

    /// The statement of `devicesPage`: the page's tokens, platforms and FCM kinds, with their locales, registration
    /// times (µs since 1970) and environments if `withDetails`.
    package static func devicesPageQuery(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String?,
        limit: Int,
        withDetails: Bool
    ) -> PostgresQuery {
        let page = pageQuery(app: app, filter: filter, after: after, through: through, limit: limit)
        let columns =
            withDetails
            ? "token, locale, registered_at_micros, environment, platform, fcm_kind" : "token, platform, fcm_kind"
        return PostgresQuery(unsafeSQL: "SELECT \(columns) FROM (\(page.sql)) AS page", binds: page.binds)
    }

    /// The statement of `devicesPageBoundary`: the page's size and last token.
    package static func devicesPageBoundaryQuery(app: String, filter: DeviceFilter, after: String?, limit: Int)
        -> PostgresQuery
    {
        let page = pageQuery(app: app, filter: filter, after: after, through: nil, limit: limit)
        return PostgresQuery(
            unsafeSQL: "SELECT count(*)::bigint, max(token) FROM (\(page.sql)) AS page", binds: page.binds)
    }

    /// The keyset page shared by `devicesPage` and `devicesPageBoundary`, as rows of (token, locale,
    /// registered_at_micros, environment, platform, fcm_kind) in token order.
    ///
    /// Pages of all devices or of a topic walk the primary key in token order (with the statistics an import
    /// leaves). A users page reads each user's devices from devices_by_user and sorts them: one statement for any
    /// list, planned with its parameters each time (PostgresNIO sends unnamed statements).
    private static func pageQuery(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String?,
        limit: Int
    ) -> PostgresQuery {
        let cursor = after ?? ""
        var locales: [String]? = nil
        var base = filter
        if case .locales(let inner, let tags) = filter {
            base = inner
            locales = tags.map(Localization.normalize)
        }
        var topic: String? = nil
        switch base {
        case .users(let users):
            // A probe of devices_by_user per user, in token order: with `user_id = ANY(…)` instead, statistics that
            // did not know the app yet made walking the app's primary key and filtering on the user as cheap.
            return """
                SELECT d.token, d.locale,
                       (extract(epoch FROM d.registered_at) * 1000000)::bigint AS registered_at_micros, d.environment,
                       d.platform, d.fcm_kind
                FROM (SELECT DISTINCT user_id FROM unnest(\(users)::text[]) AS l(user_id)) AS u
                CROSS JOIN LATERAL (
                    SELECT token, locale, registered_at, environment, platform, fcm_kind FROM devices
                    WHERE app_id = \(app) AND user_id = u.user_id AND token > \(cursor)
                      AND (\(through)::text IS NULL OR token <= \(through))
                      AND (\(locales)::text[] IS NULL OR herald_locale_matches(locale, \(locales)))
                    ORDER BY token LIMIT \(limit)) AS d
                ORDER BY d.token LIMIT \(limit)
                """
        case .topic(let name): topic = name
        case .all, .locales: break
        }
        // One statement for every filter, planned with its parameters each time: the unused conditions fold away,
        // and with the statistics `herald devices import` leaves (it analyses the table) the plan is an ordered walk
        // of devices_pkey from the cursor that stops after a page, an index-only scan once the table is vacuumed. A
        // PL/pgSQL function forcing that walk (sorting disabled) was measured at 0.62x of this on a 300,000-device
        // broadcast: every row went through its result store with all four columns.
        return """
            SELECT token, locale, (extract(epoch FROM registered_at) * 1000000)::bigint AS registered_at_micros,
                   environment, platform, fcm_kind
            FROM devices
            WHERE app_id = \(app) AND token > \(cursor)
              AND (\(through)::text IS NULL OR token <= \(through))
              AND (\(topic)::text IS NULL OR topics @> ARRAY[\(topic)]::text[])
              AND (\(locales)::text[] IS NULL OR herald_locale_matches(locale, \(locales)))
            ORDER BY token LIMIT \(limit)
            """
    }

    /// The number of devices an app has.
    public func deviceCount(app: String) async throws(StoreError) -> Int {
        try await run("counting devices") {
            let rows = try await client.query(
                "SELECT count(*)::bigint FROM devices WHERE app_id = \(app)", logger: logger)
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    private static func collect(_ rows: PostgresRowSequence) async throws -> [StoredDevice] {
        var devices: [StoredDevice] = []
        for try await (token, locale, registeredAt, environment, platform, kind) in rows.decode(
            (String, String?, Int64, String?, String, String?).self)
        {
            devices.append(
                StoredDevice(
                    token: DeviceToken(trustedHex: token), locale: locale, registeredAt: registeredAt,
                    environment: environment, platform: Self.platform(platform), fcmKind: Self.fcmKind(kind)))
        }
        return devices
    }

    /// A `platform` column's value (its CHECK allows `ios` and `android` only).
    static func platform(_ text: String) -> DevicePlatform {
        DevicePlatform(rawValue: text) ?? .ios
    }

    /// An `fcm_kind` column's value: nil for iOS (its CHECK allows `token` and `fid` only, for Android).
    static func fcmKind(_ text: String?) -> FCMTarget.Kind? {
        text.flatMap(FCMTarget.Kind.init(rawValue:))
    }
}

/// PostgreSQL COPY text format: tab-separated, `\N` for NULL, backslash escapes.
enum CopyText {
    static func appendRow(_ fields: [String?], to buffer: inout ByteBuffer) {
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            guard let field else {
                buffer.writeStaticString("\\N")
                continue
            }
            for byte in field.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// A PostgreSQL array literal with every element double-quoted.
    static func arrayLiteral(_ elements: [String]) -> String {
        let quoted = elements.map { element in
            "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}

extension Store {
    /// Removes every device of an app (the demo starts from a clean registry). Returns how many were removed.
    @discardableResult
    public func deleteDevices(app: String) async throws(StoreError) -> Int {
        try await run("deleting devices") {
            let rows = try await client.query(
                "WITH gone AS (DELETE FROM devices WHERE app_id = \(app) RETURNING 1) SELECT count(*)::bigint FROM gone",
                logger: logger
            )
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }
}
