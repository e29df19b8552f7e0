import APNSCore
import HeraldCore
import Logging
import PostgresNIO

/// The results of one batch of notifications, written back in one transaction.
public struct WriteBack: Sendable, Hashable {
    /// A dead token to prune.
    public struct Prune: Sendable, Hashable {
        public var token: DeviceToken
        public var reason: String
        /// For 410: when APNs saw the token die (ms since 1970); the device is pruned only if it registered before.
        public var apnsTimestamp: Int64?

        public init(token: DeviceToken, reason: String, apnsTimestamp: Int64?) {
            self.token = token
            self.reason = reason
            self.apnsTimestamp = apnsTimestamp
        }
    }

    /// A notification that failed for a reason other than a dead token.
    public struct Failure: Sendable, Hashable {
        public var token: DeviceToken
        public var status: Int?
        public var reason: String

        public init(token: DeviceToken, status: Int?, reason: String) {
            self.token = token
            self.status = status
            self.reason = reason
        }
    }

    public var jobID: String
    public var app: String
    public var targeted: Int = 0
    public var sent: Int = 0
    public var expired: Int = 0
    public var retried: Int = 0
    /// Entries of the job's token list that were not device tokens: each failed alone, with no token to record.
    public var rejectedTokens: Int = 0
    /// Answers that were BadDeviceToken or DeviceTokenNotForTopic (pruned or not), for the prune breaker's count
    /// across a job's batches. Such a batch always has prunes or failures, so it takes the full write-back.
    public var suspectAnswers: Int = 0
    /// Answers of unproven devices (registered by a register-only key, never delivered to) other than a delivery:
    /// left out of the prune breaker's count across the job's batches (`Store.pruneBreakerCounts`). Such answers are
    /// prunes or failures, so a batch with some takes the full write-back.
    public var unprovenAnswers: Int = 0
    /// Devices APNs accepted a notification for whose first delivery may not be recorded yet: the batch's
    /// deliveries. Those still unproven are marked delivered with the batch's completion (`Store.markDelivered`).
    /// Left empty by small-job groups.
    public var delivered: [DeviceToken] = []
    public var prunes: [Prune] = []
    public var failures: [Failure] = []

    public init(jobID: String, app: String) {
        self.jobID = jobID
        self.app = app
    }

    /// The job's identity.
    public var job: JobKey { JobKey(app: app, id: jobID) }

    /// Adds another batch's counts of the same job (prunes and failures are not merged).
    mutating func add(_ other: WriteBack) {
        targeted += other.targeted
        sent += other.sent
        expired += other.expired
        retried += other.retried
        rejectedTokens += other.rejectedTokens
    }
}

extension Store {
    /// Writes a batch's results: prunes dead devices (by the 410 timestamp rule) and records each pruned token,
    /// records failures, and adds to the job's counters — one transaction, a handful of statements whatever the
    /// batch size.
    ///
    /// A 410 for a device that registered again after APNs' timestamp is not pruned and counts as failed. A dead
    /// token that is no device's but a Live Activity token of the app (push-to-start or update) is pruned from its
    /// table by the same rules, compared with the activity token's own registration time, and recorded likewise.
    ///
    /// - Returns: how many devices were pruned.
    @discardableResult
    public func write(_ writeBack: WriteBack) async throws(StoreError) -> Int {
        try await run("writing back results") {
            try await client.withTransaction(logger: logger) { connection in
                try await Self.write(writeBack, on: connection, logger: logger)
            }
        }
    }

    /// The write-back itself, inside the caller's transaction.
    static func write(_ writeBack: WriteBack, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var pruned = 0
        var failures = writeBack.failures
        if !writeBack.prunes.isEmpty {
            let tokens = writeBack.prunes.map(\.token.hex)
            let reasons = writeBack.prunes.map(\.reason)
            let ids = NotificationID(app: writeBack.app, job: writeBack.jobID)
            let apnsIDs = writeBack.prunes.map { ids.id(for: $0.token).description }
            // -1 stands for "no timestamp" (BadDeviceToken, DeviceTokenNotForTopic): prune unconditionally.
            let timestamps = writeBack.prunes.map { $0.apnsTimestamp ?? -1 }
            let rows = try await connection.query(
                """
                WITH candidates AS (
                    SELECT * FROM unnest(\(tokens)::text[], \(reasons)::text[], \(timestamps)::bigint[],
                                         \(apnsIDs)::uuid[])
                        AS c(token, reason, ts, apns_id)),
                locked AS (
                    -- rows locked in token order, so that two write-backs pruning the same devices cannot deadlock
                    SELECT d.token FROM devices d WHERE d.app_id = \(writeBack.app) AND d.token = ANY(\(tokens))
                    ORDER BY d.token FOR UPDATE),
                deleted AS (
                    DELETE FROM devices d USING candidates c
                    WHERE d.app_id = \(writeBack.app) AND d.token = c.token AND d.token IN (SELECT token FROM locked)
                      AND (c.ts < 0 OR d.registered_at < to_timestamp(c.ts / 1000.0))
                    RETURNING d.token, c.reason, c.ts, c.apns_id, d.user_id, d.locale, d.topics, d.environment,
                              d.registered_at, d.badge, d.platform, d.fcm_kind, d.web_keys, d.web_expires_at)
                -- everything the device row held, so that `restorePrunedDevices` can put it back
                INSERT INTO dead_tokens (app_id, token, reason, apns_timestamp, job_id, apns_id, user_id, locale,
                                         topics, environment, registered_at, badge, platform, fcm_kind, web_keys,
                                         web_expires_at)
                SELECT \(writeBack.app), token, reason,
                       CASE WHEN ts < 0 THEN NULL ELSE to_timestamp(ts / 1000.0) END, \(writeBack.jobID), apns_id,
                       user_id, locale, topics, environment, registered_at, badge, platform, fcm_kind, web_keys,
                       web_expires_at
                FROM deleted
                RETURNING token
                """,
                logger: logger
            )
            var prunedTokens = Set<String>()
            for try await token in rows.decode(String.self) { prunedTokens.insert(token) }
            var kept = writeBack.prunes.filter { !prunedTokens.contains($0.token.hex) }
            if !kept.isEmpty {
                // Not a device's token (or a device registered again since): it may be a Live Activity token.
                let activityTokens = try await pruneActivityTokens(kept, of: writeBack, on: connection, logger: logger)
                prunedTokens.formUnion(activityTokens)
                kept.removeAll { activityTokens.contains($0.token.hex) }
            }
            pruned = prunedTokens.count
            if !kept.isEmpty {
                // Not pruned: either the device or activity token registered again after APNs' timestamp (it
                // stays), or it was already gone (another job pruned it first, or it was never registered).
                let keptTokens = kept.map(\.token.hex)
                let existing = try await connection.query(
                    """
                    SELECT token FROM devices WHERE app_id = \(writeBack.app) AND token = ANY(\(keptTokens))
                    UNION ALL
                    SELECT token FROM activity_start_tokens
                    WHERE app_id = \(writeBack.app) AND token = ANY(\(keptTokens))
                    UNION ALL
                    SELECT token FROM activity_update_tokens
                    WHERE app_id = \(writeBack.app) AND token = ANY(\(keptTokens))
                    """,
                    logger: logger
                )
                var stillRegistered = Set<String>()
                for try await token in existing.decode(String.self) { stillRegistered.insert(token) }
                for prune in kept {
                    let why = stillRegistered.contains(prune.token.hex) ? "registered again since" : "already pruned"
                    failures.append(
                        .init(
                            token: prune.token, status: prune.apnsTimestamp == nil ? 400 : 410,
                            reason: "\(prune.reason) (\(why))"))
                }
            }
        }
        if !failures.isEmpty {
            let tokens = failures.map(\.token.hex)
            let statuses = failures.map { $0.status ?? 0 }
            let reasons = failures.map(\.reason)
            let ids = NotificationID(app: writeBack.app, job: writeBack.jobID)
            let apnsIDs = failures.map { ids.id(for: $0.token).description }
            try await connection.query(
                """
                INSERT INTO delivery_failures (job_id, app_id, token, status, reason, apns_id)
                SELECT \(writeBack.jobID), \(writeBack.app), token, nullif(status, 0), reason, apns_id
                FROM unnest(\(tokens)::text[], \(statuses)::integer[], \(reasons)::text[], \(apnsIDs)::uuid[])
                    AS f(token, status, reason, apns_id)
                """,
                logger: logger
            )
        }
        try await connection.query(
            """
            UPDATE jobs SET targeted = targeted + \(writeBack.targeted), sent = sent + \(writeBack.sent),
                pruned = pruned + \(pruned), failed = failed + \(failures.count + writeBack.rejectedTokens),
                expired = expired + \(writeBack.expired), retried = retried + \(writeBack.retried),
                suspect_answers = suspect_answers + \(writeBack.suspectAnswers),
                unproven_answers = unproven_answers + \(writeBack.unprovenAnswers)
            WHERE app_id = \(writeBack.app) AND id = \(writeBack.jobID)
            """,
            logger: logger
        )
        return pruned
    }

    /// Prunes the Live Activity tokens among `prunes` (push-to-start and update tokens of the app) by the rules of
    /// devices: unconditionally without a timestamp, else only if registered before APNs' timestamp. Each pruned
    /// token is recorded in `dead_tokens` with its kind and activity, and its device's user, locale, topics and
    /// environment (registration time and badge stay NULL: it is not a device to restore). Returns the tokens pruned.
    ///
    /// Rows are locked in token order, start tokens then update tokens, after the devices (the statement before):
    /// two write-backs pruning the same tokens take the same locks in the same order and cannot deadlock.
    private static func pruneActivityTokens(
        _ prunes: [WriteBack.Prune], of writeBack: WriteBack, on connection: PostgresConnection, logger: Logger
    ) async throws -> Set<String> {
        let tokens = prunes.map(\.token.hex)
        let reasons = prunes.map(\.reason)
        let ids = NotificationID(app: writeBack.app, job: writeBack.jobID)
        let apnsIDs = prunes.map { ids.id(for: $0.token).description }
        let timestamps = prunes.map { $0.apnsTimestamp ?? -1 }
        let app = writeBack.app
        try await connection.query(
            """
            SELECT 1 FROM activity_start_tokens WHERE app_id = \(app) AND token = ANY(\(tokens))
            ORDER BY token, device_token, activity_type FOR UPDATE
            """,
            logger: logger)
        try await connection.query(
            """
            SELECT 1 FROM activity_update_tokens WHERE app_id = \(app) AND token = ANY(\(tokens))
            ORDER BY token, activity_id, device_token FOR UPDATE
            """,
            logger: logger)
        let rows = try await connection.query(
            """
            WITH candidates AS (
                SELECT DISTINCT ON (token) *
                FROM unnest(\(tokens)::text[], \(reasons)::text[], \(timestamps)::bigint[], \(apnsIDs)::uuid[])
                    AS c(token, reason, ts, apns_id)
                ORDER BY token),
            started AS (
                DELETE FROM activity_start_tokens s USING candidates c
                WHERE s.app_id = \(app) AND s.token = c.token
                  AND (c.ts < 0 OR s.registered_at < to_timestamp(c.ts / 1000.0))
                RETURNING s.token, s.device_token, 'push_to_start'::text AS kind, s.activity_type AS activity,
                          c.reason, c.ts, c.apns_id),
            updated AS (
                DELETE FROM activity_update_tokens u USING candidates c
                WHERE u.app_id = \(app) AND u.token = c.token
                  AND (c.ts < 0 OR u.registered_at < to_timestamp(c.ts / 1000.0))
                RETURNING u.token, u.device_token, 'update'::text AS kind, u.activity_id AS activity,
                          c.reason, c.ts, c.apns_id),
            deleted AS (SELECT * FROM started UNION ALL SELECT * FROM updated)
            INSERT INTO dead_tokens (app_id, token, reason, apns_timestamp, job_id, apns_id, user_id, locale, topics,
                                     environment, token_kind, activity)
            SELECT \(app), x.token, x.reason, CASE WHEN x.ts < 0 THEN NULL ELSE to_timestamp(x.ts / 1000.0) END,
                   \(writeBack.jobID), x.apns_id, d.user_id, d.locale, d.topics, d.environment, x.kind, x.activity
            FROM deleted x LEFT JOIN devices d ON d.app_id = \(app) AND d.token = x.device_token
            ORDER BY x.token
            RETURNING token
            """,
            logger: logger
        )
        var pruned = Set<String>()
        for try await token in rows.decode(String.self) { pruned.insert(token) }
        return pruned
    }

    /// Dead tokens recorded for an app, newest first (for reports and tests).
    public func deadTokens(app: String, limit: Int = 1000) async throws(StoreError) -> [(
        token: DeviceToken, reason: String, jobID: String?
    )] {
        try await run("reading dead tokens") {
            let rows = try await client.query(
                """
                SELECT token, reason, job_id FROM dead_tokens WHERE app_id = \(app)
                ORDER BY recorded_at DESC, id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            var result: [(DeviceToken, String, String?)] = []
            for try await (token, reason, job) in rows.decode((String, String, String?).self) {
                result.append((DeviceToken(trustedHex: token), reason, job))
            }
            return result
        }
    }
}
