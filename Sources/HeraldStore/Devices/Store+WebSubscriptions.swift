import APNSCore
import HeraldCore
import Logging
import PostgresNIO
import WebPushCore

/// A web subscription whose `expirationTime` has passed: the push service drops it then, and Herald does not send
/// to it (issue 37); `herald devices expired` lists them and, with `--prune`, removes them.
public struct ExpiredWebSubscription: Sendable, Hashable {
    /// The subscription (its endpoint is the device's token).
    public var subscription: WebPushSubscription
    public var userID: String?
    public var locale: String?
    public var topics: [String]
    /// Milliseconds since 1970: when the subscription expired (its `expirationTime`).
    public var expiredAt: Int64
    /// Microseconds since 1970: the device's last registration.
    public var registeredAt: Int64

    /// The device's token: the subscription's endpoint.
    public var token: DeviceToken { DeviceToken(trustedHex: subscription.endpoint.url) }
}

/// Where a page of expired subscriptions ends, for the next one: they are read by expiration, then endpoint.
public struct ExpiredWebSubscriptionCursor: Sendable, Hashable {
    /// Milliseconds since 1970.
    public var expiredAt: Int64
    public var token: String

    public init(expiredAt: Int64, token: String) {
        self.expiredAt = expiredAt
        self.token = token
    }
}

extension Store {
    /// The dead-token reason of a web subscription removed because its `expirationTime` passed.
    public static let subscriptionExpiredReason = "SubscriptionExpired"

    /// The database's clock in milliseconds since 1970: read once, so that every page of a listing uses the same
    /// cutoff.
    public func databaseNow() async throws(StoreError) -> Int64 {
        try await run("reading the database's clock") {
            let rows = try await client.query(
                "SELECT (extract(epoch FROM now()) * 1000)::bigint", logger: logger)
            for try await now in rows.decode(Int64.self) { return now }
            throw StoreError(.queryFailed, "reading the clock returned no row")
        }
    }

    /// One keyset page of the app's web subscriptions that expired before `cutoff` (ms since 1970), earliest first
    /// (by expiration, then endpoint), after `after`: a walk of devices_web_by_expiry (schemas/034).
    public func expiredWebSubscriptions(
        app: String, expiredBefore cutoff: Int64, after: ExpiredWebSubscriptionCursor? = nil, limit: Int
    ) async throws(StoreError) -> [ExpiredWebSubscription] {
        let (afterTime, afterToken) = (after?.expiredAt, after?.token)
        return try await run("reading a page of expired web subscriptions") {
            let rows = try await client.query(
                """
                SELECT token, web_keys, (extract(epoch FROM web_expires_at) * 1000)::bigint, user_id, locale, topics,
                       (extract(epoch FROM registered_at) * 1000000)::bigint
                FROM devices
                WHERE app_id = \(app) AND web_expires_at IS NOT NULL AND platform = 'web'
                  AND web_expires_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 millisecond'
                  AND (\(afterTime)::bigint IS NULL
                       OR (web_expires_at, token)
                          > (timestamptz 'epoch' + \(afterTime)::bigint * interval '1 millisecond', \(afterToken)::text))
                ORDER BY web_expires_at, token LIMIT \(limit)
                """,
                logger: logger)
            return try await Self.collectExpired(rows)
        }
    }

    /// Prunes up to `limit` of the app's web subscriptions that expired before `cutoff` (ms since 1970), earliest
    /// first, each recorded in `dead_tokens` with reason `SubscriptionExpired` and the device as it was, keys
    /// included (no job), in one transaction. A subscription registered again meanwhile with a later expiration (or
    /// none) is kept. Returns the subscriptions pruned; call again until it returns fewer than `limit`.
    public func pruneExpiredWebSubscriptions(app: String, expiredBefore cutoff: Int64, limit: Int)
        async throws(StoreError) -> [ExpiredWebSubscription]
    {
        try await run("pruning expired web subscriptions") {
            let rows = try await client.query(
                """
                WITH expired AS (
                    SELECT token FROM devices
                    WHERE app_id = \(app) AND web_expires_at IS NOT NULL AND platform = 'web'
                      AND web_expires_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 millisecond'
                    ORDER BY web_expires_at, token LIMIT \(limit)
                    FOR UPDATE),
                deleted AS (
                    DELETE FROM devices d USING expired x
                    WHERE d.app_id = \(app) AND d.token = x.token AND d.platform = 'web'
                      AND d.web_expires_at < timestamptz 'epoch' + \(cutoff)::bigint * interval '1 millisecond'
                    RETURNING d.token, d.user_id, d.locale, d.topics, d.environment, d.registered_at, d.badge,
                              d.platform, d.web_keys, d.web_expires_at),
                recorded AS (
                    INSERT INTO dead_tokens (app_id, token, reason, user_id, locale, topics, environment,
                                             registered_at, badge, platform, web_keys, web_expires_at)
                    SELECT \(app), token, \(Self.subscriptionExpiredReason), user_id, locale, topics, environment,
                           registered_at, badge, platform, web_keys, web_expires_at
                    FROM deleted ORDER BY token
                    RETURNING 1)
                SELECT token, web_keys, (extract(epoch FROM web_expires_at) * 1000)::bigint, user_id, locale, topics,
                       (extract(epoch FROM registered_at) * 1000000)::bigint
                FROM deleted ORDER BY web_expires_at, token
                """,
                logger: logger)
            return try await Self.collectExpired(rows)
        }
    }

    private static func collectExpired(_ rows: PostgresRowSequence) async throws -> [ExpiredWebSubscription] {
        var subscriptions: [ExpiredWebSubscription] = []
        for try await (token, keys, expiredAt, user, locale, topics, registeredAt) in rows.decode(
            (String, String, Int64, String?, String?, [String], Int64).self)
        {
            subscriptions.append(
                ExpiredWebSubscription(
                    subscription: WebPushSubscription(
                        trustedEndpoint: token, storedKeys: keys, expirationTime: expiredAt),
                    userID: user, locale: locale, topics: topics, expiredAt: expiredAt, registeredAt: registeredAt))
        }
        return subscriptions
    }
}
