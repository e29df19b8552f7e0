import APNSCore
import FCMCore
import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import WebPushCore

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
                        platform text NOT NULL, fcm_kind text, web_keys text, web_expires_ms bigint,
                        seq bigint GENERATED ALWAYS AS IDENTITY) ON COMMIT DROP
                    """,
                    logger: logger
                )
                try await connection.copyFrom(
                    table: "device_import",
                    columns: [
                        "token", "user_id", "locale", "topics", "platform", "fcm_kind", "web_keys", "web_expires_ms",
                    ],
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
                                device.platform == .web ? device.webSubscription?.keys.stored : nil,
                                device.platform == .web ? device.webSubscription?.expirationTime.map(String.init) : nil,
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
                        SELECT DISTINCT ON (token) token, user_id, locale, topics, platform, fcm_kind, web_keys,
                               timestamptz 'epoch' + web_expires_ms * interval '1 millisecond' AS web_expires_at
                        FROM device_import
                        ORDER BY token, seq DESC),  -- a token listed twice: the later row wins
                    upserted AS (
                        INSERT INTO devices AS d (app_id, token, user_id, locale, topics, registered_at, platform,
                                                  fcm_kind, web_keys, web_expires_at)
                        SELECT \(app), token, user_id, locale, topics, now(), platform, fcm_kind, web_keys,
                               web_expires_at
                        FROM incoming
                        ORDER BY token
                        ON CONFLICT (app_id, token) DO UPDATE SET
                            user_id = EXCLUDED.user_id, locale = EXCLUDED.locale, topics = EXCLUDED.topics,
                            registered_at = now(), badge = 0,
                            -- a browser may subscribe again at the same endpoint with new keys
                            web_keys = EXCLUDED.web_keys, web_expires_at = EXCLUDED.web_expires_at
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
