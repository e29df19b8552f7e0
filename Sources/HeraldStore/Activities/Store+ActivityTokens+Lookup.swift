import APNSCore
import HeraldCore
import Logging
import PostgresNIO

/// What the registry holds about one activity.
public struct ActivitySummary: Sendable, Hashable {
    /// Devices with an update token for the activity.
    public var devices: Int
    /// Microseconds since 1970: the newest registration of one of its update tokens.
    public var lastRegisteredAt: Int64

    public init(devices: Int, lastRegisteredAt: Int64) {
        self.devices = devices
        self.lastRegisteredAt = lastRegisteredAt
    }
}

extension Store {
    /// One keyset page of the push-to-start tokens for `activityType` of the devices `devices` selects, in device-token
    /// order: at most `limit` tokens of devices whose token is after `after` (the previous page's `cursor`), and
    /// whether more follow. Devices without a push-to-start token for the type are skipped, not counted.
    ///
    /// The filters are those of job audiences (`devicesPage`): users by their devices, a topic by membership, locales
    /// by `herald_locale_matches`. Pages of a topic or of every device walk the type's tokens in device order
    /// (activity_start_tokens_by_type) and look each device up; pages of users probe each user's devices.
    public func startTokens(
        app: String, activityType: String, devices: DeviceSelection, after: String? = nil, limit: Int
    ) async throws(StoreError) -> ActivityTokenPage {
        let query = Self.startTokensQuery(
            app: app, activityType: activityType, devices: devices, after: after, limit: limit)
        return try await run("reading push-to-start tokens") {
            try await Self.page(try await client.query(query, logger: logger), limit: limit)
        }
    }

    /// The statement of `startTokens`: rows of (token, device token, locale, environment), `limit + 1` at most.
    static func startTokensQuery(
        app: String, activityType: String, devices: DeviceSelection, after: String?, limit: Int
    ) -> PostgresQuery {
        let cursor = after ?? ""
        let fetch = max(0, limit) + 1
        var explicit: [String]? = nil
        var users: [String]? = nil
        var topic: String? = nil
        var locales: [String]? = nil
        switch devices {
        case .tokens(let tokens): explicit = tokens.map(\.hex)
        case .devices(let filter):
            var base = filter
            // Locales narrow any base filter (nested ones each narrow further: the innermost tags win here, as
            // audiences never nest them).
            while case .locales(let inner, let tags) = base {
                base = inner
                locales = tags.map(Localization.normalize)
            }
            switch base {
            case .users(let list): users = list
            case .topic(let name): topic = name
            case .all, .locales: break
            }
        }
        if let users {
            // A probe of devices_by_user per user (see `devicesPage`), then each device's token of the type.
            return """
                SELECT s.token, d.token, d.locale, d.environment
                FROM (SELECT DISTINCT user_id FROM unnest(\(users)::text[]) AS l(user_id)) AS u
                CROSS JOIN LATERAL (
                    SELECT token, locale, environment FROM devices
                    WHERE app_id = \(app) AND user_id = u.user_id AND token > \(cursor)
                      AND (\(locales)::text[] IS NULL OR herald_locale_matches(locale, \(locales)))) AS d
                JOIN activity_start_tokens s
                  ON s.app_id = \(app) AND s.device_token = d.token AND s.activity_type = \(activityType)
                ORDER BY d.token LIMIT \(fetch)
                """
        }
        return """
            SELECT s.token, d.token, d.locale, d.environment
            FROM activity_start_tokens s
            JOIN devices d ON d.app_id = s.app_id AND d.token = s.device_token
            WHERE s.app_id = \(app) AND s.activity_type = \(activityType) AND s.device_token > \(cursor)
              AND (\(explicit)::text[] IS NULL OR s.device_token = ANY(\(explicit)))
              AND (\(topic)::text IS NULL OR d.topics @> ARRAY[\(topic)]::text[])
              AND (\(locales)::text[] IS NULL OR herald_locale_matches(d.locale, \(locales)))
            ORDER BY s.device_token LIMIT \(fetch)
            """
    }

    /// One keyset page of an activity's update tokens, in device-token order: at most `limit` tokens of devices
    /// whose token is after `after` (the previous page's `cursor`), and whether more follow.
    public func updateTokens(app: String, activityID: String, after: String? = nil, limit: Int)
        async throws(StoreError) -> ActivityTokenPage
    {
        let cursor = after ?? ""
        let fetch = max(0, limit) + 1
        return try await run("reading update tokens") {
            let rows = try await client.query(
                """
                SELECT u.token, d.token, d.locale, d.environment
                FROM activity_update_tokens u
                JOIN devices d ON d.app_id = u.app_id AND d.token = u.device_token
                WHERE u.app_id = \(app) AND u.activity_id = \(activityID) AND u.device_token > \(cursor)
                ORDER BY u.device_token LIMIT \(fetch)
                """,
                logger: logger)
            return try await Self.page(rows, limit: limit)
        }
    }

    /// Ends an activity in the registry: deletes every update token it has, in one statement, and returns them in
    /// device-token order (what an end job resolved to). Ending it again returns nothing.
    public func endActivity(app: String, activityID: String) async throws(StoreError) -> [ActivityToken] {
        try await run("ending an activity") {
            let rows = try await client.query(
                """
                WITH gone AS (
                    DELETE FROM activity_update_tokens
                    WHERE app_id = \(app) AND activity_id = \(activityID)
                    RETURNING token, device_token)
                SELECT g.token, g.device_token, d.locale, d.environment
                FROM gone g LEFT JOIN devices d ON d.app_id = \(app) AND d.token = g.device_token
                ORDER BY g.device_token
                """,
                logger: logger)
            return try await Self.page(rows, limit: Int.max - 1).entries
        }
    }

    /// How many devices have an update token for an activity, and the newest registration; nil if none has.
    public func activitySummary(app: String, activityID: String) async throws(StoreError) -> ActivitySummary? {
        try await run("reading an activity") {
            let rows = try await client.query(
                """
                SELECT count(*)::bigint, (extract(epoch FROM max(registered_at)) * 1000000)::bigint
                FROM activity_update_tokens WHERE app_id = \(app) AND activity_id = \(activityID)
                """,
                logger: logger)
            for try await (count, last) in rows.decode((Int64, Int64?).self) {
                guard count > 0, let last else { return nil }
                return ActivitySummary(devices: Int(count), lastRegisteredAt: last)
            }
            return nil
        }
    }

    /// Rows of (token, device token, locale, environment) as a page of at most `limit`, `more` if a row was left.
    private static func page(_ rows: PostgresRowSequence, limit: Int) async throws -> ActivityTokenPage {
        var entries: [ActivityToken] = []
        var more = false
        for try await (token, device, locale, environment) in rows.decode((String, String, String?, String?).self) {
            guard entries.count < limit else {
                more = true
                break
            }
            entries.append(
                ActivityToken(
                    token: DeviceToken(trustedHex: token), device: DeviceToken(trustedHex: device), locale: locale,
                    environment: environment))
        }
        return ActivityTokenPage(entries: entries, more: more)
    }
}
