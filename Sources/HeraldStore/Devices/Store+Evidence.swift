import APNSCore
import Logging
import PostgresNIO

/// What the prune breaker may take as evidence (schemas/026). A device is *unproven* while a register-only key (the
/// one an app carries, so anyone's) registered it and APNs never accepted a notification for it: anyone could have
/// made it up, so its answers do not count against the app. Devices imported or registered by any other key, and
/// devices delivered to once, are evidence.
extension Store {
    /// The unproven devices among `tokens` of `app` (lowercase hex): read through devices_unproven, which holds only
    /// those. Asked only for a batch with a BadDeviceToken or DeviceTokenNotForTopic answer.
    public func unprovenDevices(app: String, tokens: [DeviceToken]) async throws(StoreError) -> Set<String> {
        guard !tokens.isEmpty else { return [] }
        let hex = tokens.map(\.hex)
        return try await run("reading unproven devices") {
            let rows = try await client.query(
                """
                SELECT token FROM devices
                WHERE app_id = \(app) AND token = ANY(\(hex)) AND registered_by IS NOT NULL AND delivered_at IS NULL
                """,
                logger: logger)
            var unproven = Set<String>()
            for try await token in rows.decode(String.self) { unproven.insert(token) }
            return unproven
        }
    }

    /// Whether `app` has any unproven device (registered by a register-only key, never delivered to): a batch of an
    /// app with none records no first deliveries (a device that becomes unproven meanwhile is marked at its next).
    public func hasUnprovenDevices(app: String) async throws(StoreError) -> Bool {
        try await run("looking for unproven devices") {
            let rows = try await client.query(
                """
                SELECT 1 FROM devices WHERE app_id = \(app) AND registered_by IS NOT NULL AND delivered_at IS NULL
                LIMIT 1
                """,
                logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    /// Marks the unproven devices among `tokens` of `app` delivered to (now), inside the caller's transaction: a
    /// probe of devices_unproven per token, and a write only for a device's first delivery. Rows another
    /// transaction holds are skipped rather than waited for (and so never deadlock with a prune): such a device is
    /// marked at its next delivery.
    static func markDelivered(app: String, tokens: [DeviceToken], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        guard !tokens.isEmpty else { return }
        // Most apps have no unproven device at all (imported, or registered by backend keys): one probe of
        // devices_unproven, then empty for the app, spares sending the batch's tokens (a 5,000-token array is
        // ~330 KB to encode and parse; measured at 5 % of a 300,000-device broadcast right after its import).
        var anyUnproven = false
        let probe = try await connection.query(
            """
            SELECT 1 FROM devices WHERE app_id = \(app) AND registered_by IS NOT NULL AND delivered_at IS NULL LIMIT 1
            """,
            logger: logger)
        for try await _ in probe { anyUnproven = true }
        guard anyUnproven else { return }
        let hex = tokens.map(\.hex)
        try await connection.query(
            """
            UPDATE devices d SET delivered_at = now()
            FROM (SELECT token FROM devices
                  WHERE app_id = \(app) AND token = ANY(\(hex)) AND registered_by IS NOT NULL AND delivered_at IS NULL
                  ORDER BY token FOR UPDATE SKIP LOCKED) AS u
            WHERE d.app_id = \(app) AND d.token = u.token
            """,
            logger: logger)
    }
}
