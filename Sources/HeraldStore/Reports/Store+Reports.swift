import APNSCore
import FCMCore
import HeraldCore
import Logging
import PostgresNIO
import WebPushCore

/// One pruned token, as the cleanup report lists it.
public struct DeadTokenRecord: Sendable, Hashable {
    public var token: DeviceToken
    public var reason: String
    /// When APNs saw the token die (410), in milliseconds since 1970.
    public var apnsTimestamp: Int64?
    public var jobID: String?
    /// When Herald pruned it, in milliseconds since 1970.
    public var recordedAt: Int64
    /// The platform of the device the token was.
    public var platform: DevicePlatform = .ios
    /// For an Android device, whether the token was a registration token or an installation id.
    public var fcmKind: FCMTarget.Kind? = nil
    /// For a web subscription (whose token is its endpoint), the endpoint's origin: the push service.
    public var endpointOrigin: String? = nil
}

/// Pruned tokens of one app in a time window, with totals by reason and by UTC day over the whole window.
public struct DeadTokenReport: Sendable, Hashable {
    /// The newest first, at most the limit asked for.
    public var records: [DeadTokenRecord]
    /// Every pruned token in the window, not only the listed ones.
    public var total: Int
    public var byReason: [String: Int]
    /// Counts per UTC day, oldest day first.
    public var byDay: [DayCount]

    /// Whether `records` stops short of `total`.
    public var truncated: Bool { records.count < total }

    /// Pruned tokens on one day.
    public struct DayCount: Sendable, Hashable {
        /// `YYYY-MM-DD`, UTC.
        public var day: String
        public var count: Int
    }
}

/// A job with its times, for `herald report jobs`.
public struct JobSummary: Sendable, Hashable {
    public var status: JobStatus
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var finishedAt: Int64?
}

extension Store {
    /// The dead-token report of `app` for `since ≤ recorded_at < until` (milliseconds since 1970; nil: now).
    public func deadTokenReport(
        app: String,
        since: Int64,
        until: Int64? = nil,
        limit: Int = 10_000
    ) async throws(StoreError) -> DeadTokenReport {
        let from = Double(since) / 1000
        let to = until.map { Double($0) / 1000 }
        return try await run("reading the dead-token report") {
            let rows = try await client.query(
                """
                SELECT token, reason, (extract(epoch FROM apns_timestamp) * 1000)::bigint, job_id,
                       (extract(epoch FROM recorded_at) * 1000)::bigint, platform, fcm_kind
                FROM dead_tokens
                WHERE app_id = \(app) AND recorded_at >= to_timestamp(\(from))
                  AND (\(to)::float8 IS NULL OR recorded_at < to_timestamp(\(to)))
                ORDER BY recorded_at DESC, id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            var records: [DeadTokenRecord] = []
            for try await (token, reason, apns, job, recorded, platform, kind) in rows.decode(
                (String, String, Int64?, String?, Int64, String, String?).self)
            {
                records.append(
                    DeadTokenRecord(
                        token: DeviceToken(trustedHex: token), reason: reason, apnsTimestamp: apns, jobID: job,
                        recordedAt: recorded, platform: Self.platform(platform), fcmKind: Self.fcmKind(kind),
                        endpointOrigin: platform == "web" ? WebPushEndpoint(trusted: token).origin : nil
                    )
                )
            }
            let totals = try await client.query(
                """
                SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), reason, count(*)::bigint
                FROM dead_tokens
                WHERE app_id = \(app) AND recorded_at >= to_timestamp(\(from))
                  AND (\(to)::float8 IS NULL OR recorded_at < to_timestamp(\(to)))
                GROUP BY 1, 2 ORDER BY 1, 2
                """,
                logger: logger
            )
            var total = 0
            var byReason: [String: Int] = [:]
            var byDay: [DeadTokenReport.DayCount] = []
            for try await (day, reason, count) in totals.decode((String, String, Int64).self) {
                total += Int(count)
                byReason[reason, default: 0] += Int(count)
                if byDay.last?.day == day {
                    byDay[byDay.count - 1].count += Int(count)
                } else {
                    byDay.append(.init(day: day, count: Int(count)))
                }
            }
            return DeadTokenReport(records: records, total: total, byReason: byReason, byDay: byDay)
        }
    }

    /// Jobs created since `since` (milliseconds since 1970), of one app or all, newest first.
    public func jobSummaries(app: String? = nil, since: Int64, limit: Int = 1000) async throws(StoreError)
        -> [JobSummary]
    {
        let from = Double(since) / 1000
        return try await run("reading the jobs report") {
            let rows = try await client.query(
                """
                SELECT id, app_id, state, target_kind, targeted, sent, pruned, failed, expired, retried, error,
                       (extract(epoch FROM created_at) * 1000)::bigint, (extract(epoch FROM finished_at) * 1000)::bigint
                FROM jobs WHERE created_at >= to_timestamp(\(from)) AND (\(app)::text IS NULL OR app_id = \(app))
                ORDER BY created_at DESC, id LIMIT \(limit)
                """,
                logger: logger
            )
            var jobs: [JobSummary] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                jobs.append(
                    JobSummary(
                        status: try Self.jobStatus(row), createdAt: try cells[11].decode(Int64.self),
                        finishedAt: try cells[12].decode(Int64?.self)))
            }
            return jobs
        }
    }
}
