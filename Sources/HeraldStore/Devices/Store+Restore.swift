import HeraldCore
import PostgresNIO

/// What `restorePrunedDevices` did.
public struct DeviceRestoration: Sendable, Hashable, Codable {
    /// Devices put back as they were when the job pruned them.
    public var restored: Int
    /// Tokens registered again since (the newer row is kept, never overwritten).
    public var skipped: Int
    /// Dead-token records written before schemas/008, which lack the device's details: not restorable.
    public var unrestorable: Int

    public init(restored: Int, skipped: Int, unrestorable: Int) {
        self.restored = restored
        self.skipped = skipped
        self.unrestorable = unrestorable
    }
}

extension Store {
    /// Puts back the devices that a job pruned, from its dead-token records: platform (and FCM kind, or a web
    /// subscription's keys and expiration), user, locale,
    /// topics, environment, registration time and badge as they were. A token registered again since is skipped (its row is newer and is
    /// never overwritten). Running it again restores nothing more: every token is then registered.
    public func restorePrunedDevices(_ job: JobKey) async throws(StoreError) -> DeviceRestoration {
        try await run("restoring pruned devices") {
            let rows = try await client.query(
                """
                WITH pruned AS (
                    -- a token pruned twice by one job (a redelivered batch) counts once: its latest record.
                    -- Device tokens only: a pruned Live Activity token (token_kind set) is not a device, and
                    -- ActivityKit hands the app a new one.
                    SELECT DISTINCT ON (token) token, user_id, locale, topics, environment, registered_at, badge,
                           platform, fcm_kind, web_keys, web_expires_at
                    FROM dead_tokens WHERE app_id = \(job.app) AND job_id = \(job.id) AND token_kind IS NULL
                    ORDER BY token, id DESC),
                -- (a web subscription without its keys cannot be sent to: none is recorded so, but none is put back)
                restorable AS (
                    SELECT * FROM pruned
                    WHERE registered_at IS NOT NULL AND (platform <> 'web' OR web_keys IS NOT NULL)),
                inserted AS (
                    INSERT INTO devices (app_id, token, user_id, locale, topics, environment, registered_at, badge,
                                         platform, fcm_kind, web_keys, web_expires_at)
                    SELECT \(job.app), token, user_id, locale, coalesce(topics, '{}'), environment, registered_at,
                           coalesce(badge, 0), platform, fcm_kind, web_keys, web_expires_at
                    FROM restorable ORDER BY token
                    ON CONFLICT (app_id, token) DO NOTHING
                    RETURNING 1)
                SELECT (SELECT count(*) FROM pruned), (SELECT count(*) FROM restorable), (SELECT count(*) FROM inserted)
                """,
                logger: logger
            )
            for try await (pruned, restorable, inserted) in rows.decode((Int, Int, Int).self) {
                return DeviceRestoration(
                    restored: inserted, skipped: restorable - inserted, unrestorable: pruned - restorable)
            }
            return DeviceRestoration(restored: 0, skipped: 0, unrestorable: 0)
        }
    }

    /// The prune breaker's counts of a job so far, across its batches written back: answers (sent + pruned +
    /// failed, less the answers of unproven devices) and those that were BadDeviceToken or DeviceTokenNotForTopic
    /// from devices that are evidence. Zero for an unknown job.
    public func pruneBreakerCounts(_ job: JobKey) async throws(StoreError) -> (answers: Int, suspect: Int) {
        try await run("reading a job's prune counts") {
            let rows = try await client.query(
                """
                SELECT sent + pruned + failed - unproven_answers, suspect_answers FROM jobs
                WHERE app_id = \(job.app) AND id = \(job.id)
                """,
                logger: logger
            )
            for try await (answers, suspect) in rows.decode((Int, Int).self) { return (answers, suspect) }
            return (0, 0)
        }
    }
}
