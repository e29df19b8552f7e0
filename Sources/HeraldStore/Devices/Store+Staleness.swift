import APNSCore
import FCMCore
import HeraldCore
import Logging
import PostgresNIO

/// An Android device that has not registered again since a cutoff: FCM expires a token that is not refreshed for
/// 270 days (sends to it answer 404 `UNREGISTERED`), and treats one a month old as stale.
public struct StaleDevice: Sendable, Hashable {
    public var token: DeviceToken
    /// Whether the token is a registration token or an installation id.
    public var fcmKind: FCMTarget.Kind
    public var userID: String?
    public var locale: String?
    public var topics: [String]
    /// Microseconds since 1970: the device's last registration (a re-registration refreshes it).
    public var registeredAt: Int64
}

/// Where a page of stale devices ends, for the next one: they are read oldest first.
public struct StaleDeviceCursor: Sendable, Hashable {
    /// Microseconds since 1970.
    public var registeredAt: Int64
    public var token: String

    public init(registeredAt: Int64, token: String) {
        self.registeredAt = registeredAt
        self.token = token
    }
}

extension Store {
    /// The longest staleness threshold there is: FCM expires Android tokens not refreshed for 270 days.
    public static let longestStaleness: Duration = .seconds(270 * 86_400)

    /// The registration time (µs since 1970) before which an Android device is stale: `olderThan` before the
    /// database's clock, read once so that every page of a listing uses the same cutoff.
    public func staleCutoff(olderThan: Duration) async throws(StoreError) -> Int64 {
        let micros = olderThan.components.seconds * 1_000_000 + olderThan.components.attoseconds / 1_000_000_000_000
        return try await run("reading the staleness cutoff") {
            let rows = try await client.query(
                "SELECT (extract(epoch FROM now()) * 1000000)::bigint - \(micros)::bigint", logger: logger)
            for try await cutoff in rows.decode(Int64.self) { return cutoff }
            throw StoreError(.queryFailed, "reading the clock returned no row")
        }
    }

    /// One keyset page of the app's Android devices registered before `cutoff` (µs since 1970), oldest first (by
    /// registration time, then token), after `after`.
    public func staleDevicesPage(
        app: String, registeredBefore cutoff: Int64, after: StaleDeviceCursor?, limit: Int
    ) async throws(StoreError) -> [StaleDevice] {
        try await run("reading a page of stale devices") {
            let rows = try await client.query(
                Self.staleDevicesPageQuery(app: app, registeredBefore: cutoff, after: after, limit: limit),
                logger: logger)
            return try await Self.collectStale(rows)
        }
    }

    /// The statement of `staleDevicesPage`: an ordered walk of devices_android_by_registration (schemas/033) from
    /// the cursor. Times stay in microseconds (an interval of whole microseconds from the epoch), which a float of
    /// seconds would round.
    package static func staleDevicesPageQuery(
        app: String, registeredBefore cutoff: Int64, after: StaleDeviceCursor?, limit: Int
    ) -> PostgresQuery {
        let (afterTime, afterToken) = (after?.registeredAt, after?.token)
        return """
            SELECT token, fcm_kind, user_id, locale, topics, (extract(epoch FROM registered_at) * 1000000)::bigint
            FROM devices
            WHERE app_id = \(app) AND platform = 'android'
              AND registered_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 microsecond'
              AND (\(afterTime)::bigint IS NULL
                   OR (registered_at, token)
                      > (timestamptz 'epoch' + \(afterTime)::bigint * interval '1 microsecond', \(afterToken)::text))
            ORDER BY registered_at, token LIMIT \(limit)
            """
    }

    /// Prunes up to `limit` of the app's Android devices registered before `cutoff` (µs since 1970), oldest first,
    /// each recorded in `dead_tokens` with reason `Stale` and the device as it was (no job), in one transaction.
    /// A device registered again meanwhile is kept. Returns the devices pruned; call again until it returns fewer
    /// than `limit`.
    public func pruneStaleDevices(app: String, registeredBefore cutoff: Int64, limit: Int) async throws(StoreError)
        -> [StaleDevice]
    {
        try await run("pruning stale devices") {
            let rows = try await client.query(
                """
                WITH stale AS (
                    -- locked oldest first; a row registered again since the snapshot is checked again and skipped
                    SELECT token FROM devices
                    WHERE app_id = \(app) AND platform = 'android'
                      AND registered_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 microsecond'
                    ORDER BY registered_at, token LIMIT \(limit)
                    FOR UPDATE),
                deleted AS (
                    DELETE FROM devices d USING stale s
                    WHERE d.app_id = \(app) AND d.token = s.token AND d.platform = 'android'
                      AND d.registered_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 microsecond'
                    RETURNING d.token, d.user_id, d.locale, d.topics, d.environment, d.registered_at, d.badge,
                              d.platform, d.fcm_kind),
                recorded AS (
                    -- everything the device row held, as a job's prune records it (a data-modifying WITH runs to
                    -- completion whether or not the statement reads it)
                    INSERT INTO dead_tokens (app_id, token, reason, user_id, locale, topics, environment,
                                             registered_at, badge, platform, fcm_kind)
                    SELECT \(app), token, 'Stale', user_id, locale, topics, environment, registered_at, badge,
                           platform, fcm_kind
                    FROM deleted ORDER BY token
                    RETURNING 1)
                SELECT token, fcm_kind, user_id, locale, topics, (extract(epoch FROM registered_at) * 1000000)::bigint
                FROM deleted ORDER BY registered_at, token
                """,
                logger: logger
            )
            return try await Self.collectStale(rows)
        }
    }

    private static func collectStale(_ rows: PostgresRowSequence) async throws -> [StaleDevice] {
        var devices: [StaleDevice] = []
        for try await (token, kind, user, locale, topics, registeredAt) in rows.decode(
            (String, String?, String?, String?, [String], Int64).self)
        {
            devices.append(
                StaleDevice(
                    token: DeviceToken(trustedHex: token), fcmKind: fcmKind(kind) ?? .token, userID: user,
                    locale: locale, topics: topics, registeredAt: registeredAt))
        }
        return devices
    }
}
