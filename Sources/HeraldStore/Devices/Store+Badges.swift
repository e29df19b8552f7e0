import APNSCore
import HeraldCore
import Logging
import PostgresNIO

extension Store {
    /// The badge each device gets for `job`, which increments badge counters by `increment`: once per device per
    /// job. The first call for a device adds `increment` to its counter (clamped to 0…2,147,483,647, so that no
    /// increment can overflow the column) and records the result for the job; later calls for the same job and
    /// device — a retry batch, a redelivery, a concurrent copy — change nothing and return the recorded badge.
    /// Devices that are not registered get none.
    ///
    /// One statement: the device rows are locked first (in token order, so that two jobs cannot deadlock), which
    /// serialises every application to a device; the record's `ON CONFLICT DO UPDATE` returns the badge that an
    /// earlier application committed.
    public func incrementBadges(job: JobKey, tokens: [DeviceToken], by increment: Int) async throws(StoreError)
        -> [String: Int]
    {
        guard !tokens.isEmpty else { return [:] }
        let hex = tokens.map(\.hex)
        let step = Int64(clamping: increment)
        return try await run("incrementing badges") {
            let rows = try await client.query(
                """
                WITH locked AS (
                    SELECT token, badge FROM devices WHERE app_id = \(job.app) AND token = ANY(\(hex))
                    ORDER BY token FOR UPDATE),
                applied AS (
                    INSERT INTO badge_applications AS a (app_id, job_id, token, badge)
                    SELECT \(job.app), \(job.id), token,
                           least(greatest(badge::numeric + \(step)::numeric, 0), 2147483647)::integer
                    FROM locked
                    ON CONFLICT (app_id, job_id, token) DO UPDATE SET badge = a.badge
                    RETURNING a.token, a.badge, (a.xmax = 0) AS first),
                counted AS (
                    UPDATE devices d SET badge = applied.badge FROM applied
                    WHERE applied.first AND d.app_id = \(job.app) AND d.token = applied.token)
                SELECT token, badge FROM applied
                """,
                logger: logger
            )
            var badges: [String: Int] = [:]
            for try await (token, badge) in rows.decode((String, Int32).self) { badges[token] = Int(badge) }
            return badges
        }
    }
}
