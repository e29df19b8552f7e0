import APNSCore
import FCMCore
import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import WebPushCore

extension Store {
    /// One keyset page of an app's devices matching `filter`, in token order: `after < token ≤ through`.
    ///
    /// - Parameter withDetails: false reads the tokens with their platforms and FCM kinds alone (locale,
    ///   registeredAt, environment and web subscription left empty): what a batch whose payload is the same for
    ///   every device, of an app serving one environment without Web Push, needs, at a fraction of the cost of
    ///   decoding seven columns per row (its web devices, if any, are not sent to: the app has no VAPID key). Every
    ///   device comes with its platform and FCM kind either way: the worker chooses its provider by them.
    /// - Parameter withSubscriptions: false leaves web subscriptions out of a page with details: what an app without
    ///   a `webpush` block needs (its web devices are not sent to), one column fewer to compute and decode per row.
    public func devicesPage(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String? = nil,
        limit: Int,
        withDetails: Bool = true,
        withSubscriptions: Bool = true
    ) async throws(StoreError) -> [StoredDevice] {
        try await run("reading a page of devices") {
            let rows = try await client.query(
                Self.devicesPageQuery(
                    app: app, filter: filter, after: after, through: through, limit: limit, withDetails: withDetails,
                    withSubscriptions: withSubscriptions),
                logger: logger
            )
            var devices: [StoredDevice] = []
            devices.reserveCapacity(limit)
            if withDetails {
                devices = try await Self.collect(rows)
            } else {
                for try await row in rows { devices.append(try Self.pageDevice(row)) }
            }
            return devices
        }
    }

    /// A row of a page without details (token, platform, fcm_kind), decoded cell by cell: `rows.decode((String,
    /// String, String?).self)` looks its tuple type up in the runtime's metadata cache for every row, which was a
    /// fiftieth of a broadcast's CPU.
    static func pageDevice(_ row: PostgresRow) throws -> StoredDevice {
        var cells = row.makeIterator()
        guard let token = cells.next(), let platform = cells.next(), let kind = cells.next() else {
            throw StoreError.permanent(.queryFailed, "a page of devices has fewer than three columns")
        }
        return StoredDevice(
            token: DeviceToken(trustedHex: try token.decode(String.self)), locale: nil, registeredAt: 0,
            platform: Self.platform(try platform.decode(String.self)),
            fcmKind: Self.fcmKind(try kind.decode(String?.self)))
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
    /// times (µs since 1970), environments and web subscriptions (`webColumn`) if `withDetails`.
    package static func devicesPageQuery(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String?,
        limit: Int,
        withDetails: Bool,
        withSubscriptions: Bool = true
    ) -> PostgresQuery {
        let page = pageQuery(
            app: app, filter: filter, after: after, through: through, limit: limit, withDetails: withDetails,
            withSubscriptions: withSubscriptions)
        let columns =
            withDetails
            ? "token, locale, registered_at_micros, environment, platform, fcm_kind"
                + (withSubscriptions ? ", web" : "")
            : "token, platform, fcm_kind"
        return PostgresQuery(unsafeSQL: "SELECT \(columns) FROM (\(page.sql)) AS page", binds: page.binds)
    }

    /// The statement of `devicesPageBoundary`: the page's size and last token.
    package static func devicesPageBoundaryQuery(app: String, filter: DeviceFilter, after: String?, limit: Int)
        -> PostgresQuery
    {
        let page = pageQuery(
            app: app, filter: filter, after: after, through: nil, limit: limit, withDetails: false,
            withSubscriptions: false)
        return PostgresQuery(
            unsafeSQL: "SELECT count(*)::bigint, max(token) FROM (\(page.sql)) AS page", binds: page.binds)
    }

    /// The keyset page shared by `devicesPage` and `devicesPageBoundary`, as rows of (token, locale,
    /// registered_at_micros, environment, platform, fcm_kind, web) in token order; without details, of (token,
    /// platform, fcm_kind) alone: the page is a subquery with a LIMIT, which PostgreSQL does not flatten, so every
    /// column it lists is computed for every row whether the outer query reads it or not.
    ///
    /// Pages of all devices or of a topic walk the primary key in token order (with the statistics an import
    /// leaves). A users page reads each user's devices from devices_by_user and sorts them: one statement for any
    /// list, planned with its parameters each time (PostgresNIO sends unnamed statements).
    private static func pageQuery(
        app: String,
        filter: DeviceFilter,
        after: String?,
        through: String?,
        limit: Int,
        withDetails: Bool,
        withSubscriptions: Bool
    ) -> PostgresQuery {
        let cursor = after ?? ""
        let web = withSubscriptions ? ", \(webColumn) AS web" : ""
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
            let (outer, inner) =
                withDetails
                ? (
                    "d.token, d.locale, (extract(epoch FROM d.registered_at) * 1000000)::bigint AS "
                        + "registered_at_micros, d.environment, d.platform, d.fcm_kind"
                        + (withSubscriptions ? ", d.web" : ""),
                    "token, locale, registered_at, environment, platform, fcm_kind" + web
                ) : ("d.token, d.platform, d.fcm_kind", "token, platform, fcm_kind")
            return """
                SELECT \(unescaped: outer)
                FROM (SELECT DISTINCT user_id FROM unnest(\(users)::text[]) AS l(user_id)) AS u
                CROSS JOIN LATERAL (
                    SELECT \(unescaped: inner)
                    FROM devices
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
        let columns =
            withDetails
            ? "token, locale, (extract(epoch FROM registered_at) * 1000000)::bigint AS registered_at_micros, "
                + "environment, platform, fcm_kind" + web
            : "token, platform, fcm_kind"
        return """
            SELECT \(unescaped: columns)
            FROM devices
            WHERE app_id = \(app) AND token > \(cursor)
              AND (\(through)::text IS NULL OR token <= \(through))
              AND (\(topic)::text IS NULL OR topics @> ARRAY[\(topic)]::text[])
              AND (\(locales)::text[] IS NULL OR herald_locale_matches(locale, \(locales)))
            ORDER BY token LIMIT \(limit)
            """
    }
}
