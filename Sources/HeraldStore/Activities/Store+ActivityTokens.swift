import APNSCore
import HeraldCore
import Logging
import PostgresNIO

/// A Live Activity token as a sender needs it: the token to send to, and the device it belongs to.
public struct ActivityToken: Sendable, Hashable {
    /// The push-to-start or update token: what goes in the request's path.
    public var token: DeviceToken
    /// The device's ordinary APNs token.
    public var device: DeviceToken
    /// The device's locale, if it registered one.
    public var locale: String?
    /// The APNs environment the device registered with (`production`, `sandbox`), if any: activity tokens go where
    /// their device goes.
    public var environment: String?

    public init(token: DeviceToken, device: DeviceToken, locale: String? = nil, environment: String? = nil) {
        self.token = token
        self.device = device
        self.locale = locale
        self.environment = environment
    }
}

/// One keyset page of activity tokens, in the order of their devices' tokens.
public struct ActivityTokenPage: Sendable, Hashable {
    public var entries: [ActivityToken]
    /// Whether more tokens follow this page.
    public var more: Bool

    public init(entries: [ActivityToken], more: Bool) {
        self.entries = entries
        self.more = more
    }

    /// The tokens to send to.
    public var tokens: [DeviceToken] { entries.map(\.token) }

    /// The `after` of the next page: the device token of the last entry.
    public var cursor: String? { entries.last?.device.hex }
}

/// Which devices' push-to-start tokens a start job reads: explicit device tokens, or the devices a page filter
/// selects (users, a topic, every device, optionally narrowed to locales), with the same rules as job audiences.
public enum DeviceSelection: Sendable, Hashable {
    /// Devices by their ordinary APNs tokens (unregistered ones are simply absent).
    case tokens([DeviceToken])
    /// Devices as a job audience selects them.
    case devices(DeviceFilter)

    /// The devices of these users.
    public static func users(_ users: [String]) -> DeviceSelection { .devices(.users(users)) }
    /// The devices subscribed to a topic.
    public static func topic(_ topic: String) -> DeviceSelection { .devices(.topic(topic)) }
    /// Every device of the app.
    public static var all: DeviceSelection { .devices(.all) }
}

/// What registering an activity token did.
public struct ActivityTokenRegistration: Sendable, Hashable {
    /// No token was registered for this device and activity (type or id) before.
    public var created: Bool
    /// A different token was registered before and this one replaced it (rotation: the newest wins).
    public var replaced: Bool
    /// Microseconds since 1970: what the 410 timestamp rule compares against.
    public var registeredAt: Int64

    public init(created: Bool, replaced: Bool, registeredAt: Int64) {
        self.created = created
        self.replaced = replaced
        self.registeredAt = registeredAt
    }
}

extension StoreError.Code {
    /// An activity token names a device the app has not registered.
    public static let deviceNotRegistered = StoreError.Code(rawValue: "device_not_registered")
}

extension Store {
    /// Registers or refreshes a device's push-to-start token for an activity type: upsert, registration time now.
    /// The device must be registered for the app (`StoreError.Code.deviceNotRegistered` otherwise); with
    /// `registeredBy` (a register-only API key), it must be one that key registered (`notOwnDevice` otherwise),
    /// and nothing is written. The device row is share-locked for the statement, so a concurrent delete of the
    /// device either waits or has already removed it.
    public func registerStartToken(
        app: String, device: DeviceToken, activityType: String, token: DeviceToken, registeredBy: Int64?
    ) async throws(StoreError) -> ActivityTokenRegistration {
        try await upsertActivityToken(
            "registering a push-to-start token", app: app, device: device, registeredBy: registeredBy
        ) { connection, logger in
            let restricted = registeredBy != nil
            let old = try await connection.query(
                """
                SELECT s.token FROM activity_start_tokens s
                WHERE s.app_id = \(app) AND s.device_token = \(device.hex) AND s.activity_type = \(activityType)
                FOR UPDATE
                """,
                logger: logger)
            var previous: String? = nil
            for try await token in old.decode(String.self) { previous = token }
            let rows = try await connection.query(
                """
                INSERT INTO activity_start_tokens AS s (app_id, device_token, activity_type, token, registered_at,
                                                        registered_by)
                SELECT d.app_id, d.token, \(activityType), \(token.hex), now(), \(registeredBy) FROM devices d
                WHERE d.app_id = \(app) AND d.token = \(device.hex)
                  AND (NOT \(restricted) OR d.registered_by = \(registeredBy))
                ON CONFLICT (app_id, device_token, activity_type) DO UPDATE SET
                    token = EXCLUDED.token, registered_at = now(),
                    registered_by = coalesce(EXCLUDED.registered_by, s.registered_by)
                RETURNING (xmax = 0), (extract(epoch FROM registered_at) * 1000000)::bigint
                """,
                logger: logger)
            return try await Self.registration(rows, previous: previous, token: token)
        }
    }

    /// Registers a running activity's update token on a device: upsert, registration time now. Registering again for
    /// the same app, activity and device replaces the token (`replaced` says whether it differed). The device rules
    /// are `registerStartToken`'s.
    public func registerUpdateToken(
        app: String, activityID: String, device: DeviceToken, token: DeviceToken, registeredBy: Int64?,
        maximumPerDevice: Int? = nil
    ) async throws(StoreError) -> ActivityTokenRegistration {
        try await upsertActivityToken(
            "registering an update token", app: app, device: device, registeredBy: registeredBy
        ) { connection, logger in
            let restricted = registeredBy != nil
            let old = try await connection.query(
                """
                SELECT u.token FROM activity_update_tokens u
                WHERE u.app_id = \(app) AND u.activity_id = \(activityID) AND u.device_token = \(device.hex)
                FOR UPDATE
                """,
                logger: logger)
            var previous: String? = nil
            for try await token in old.decode(String.self) { previous = token }
            if previous == nil, let maximumPerDevice {
                try await Self.checkUpdateTokenQuota(
                    app: app, device: device, maximum: maximumPerDevice, on: connection, logger: logger)
            }
            let rows = try await connection.query(
                """
                INSERT INTO activity_update_tokens AS u (app_id, activity_id, device_token, token, registered_at,
                                                         registered_by)
                SELECT d.app_id, \(activityID), d.token, \(token.hex), now(), \(registeredBy) FROM devices d
                WHERE d.app_id = \(app) AND d.token = \(device.hex)
                  AND (NOT \(restricted) OR d.registered_by = \(registeredBy))
                ON CONFLICT (app_id, activity_id, device_token) DO UPDATE SET
                    token = EXCLUDED.token, registered_at = now(),
                    registered_by = coalesce(EXCLUDED.registered_by, u.registered_by)
                RETURNING (xmax = 0), (extract(epoch FROM registered_at) * 1000000)::bigint
                """,
                logger: logger)
            return try await Self.registration(rows, previous: previous, token: token)
        }
    }

    /// Refuses a new activity's update token for a device that has `maximum` already (`quotaExceeded`): a
    /// register-only key's quota. Counted on activity_update_tokens_by_device; concurrent registrations for one
    /// device may pass it by the few in flight.
    private static func checkUpdateTokenQuota(
        app: String, device: DeviceToken, maximum: Int, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let rows = try await connection.query(
            """
            SELECT count(*)::bigint FROM activity_update_tokens
            WHERE app_id = \(app) AND device_token = \(device.hex)
            """,
            logger: logger)
        var count: Int64 = 0
        for try await n in rows.decode(Int64.self) { count = n }
        if count >= maximum {
            var error = StoreError.permanent(
                .quotaExceeded,
                "this device has \(maximum) activities' update tokens, the most this API key may register for one"
                    + " device; end an activity (DELETE its update token) first")
            error.retryAfter = 3600
            throw error
        }
    }

    /// The transaction around an activity token's upsert: the device is share-locked first (so that it cannot be
    /// deleted until the commit), and a missing or foreign device is refused before `upsert` runs.
    private func upsertActivityToken(
        _ what: String, app: String, device: DeviceToken, registeredBy: Int64?,
        _ upsert: @escaping @Sendable (PostgresConnection, Logger) async throws -> ActivityTokenRegistration?
    ) async throws(StoreError) -> ActivityTokenRegistration {
        try await run(what) {
            try await client.withTransaction(logger: logger) { connection in
                // Live Activities are iOS only: an Android device of the token is not a device they can be on.
                let rows = try await connection.query(
                    """
                    SELECT registered_by FROM devices
                    WHERE app_id = \(app) AND token = \(device.hex) AND platform = 'ios'
                    FOR KEY SHARE
                    """,
                    logger: logger)
                var owner: Int64?? = nil
                for try await key in rows.decode(Int64?.self) { owner = .some(key) }
                guard let owner else { throw Self.deviceNotRegistered() }
                if let registeredBy, owner != registeredBy { throw Self.notOwnActivityDevice() }
                guard let result = try await upsert(connection, logger) else {
                    // The upsert's own check of the key: the device changed hands since it was locked.
                    if registeredBy != nil { throw Self.notOwnActivityDevice() }
                    throw StoreError(.queryFailed, "\(what) returned no row")
                }
                return result
            }
        }
    }

    /// The registration an upsert's `RETURNING (xmax = 0), registered_at µs` row describes.
    private static func registration(_ rows: PostgresRowSequence, previous: String?, token: DeviceToken) async throws
        -> ActivityTokenRegistration?
    {
        for try await (created, registeredAt) in rows.decode((Bool, Int64).self) {
            return ActivityTokenRegistration(
                created: created, replaced: previous != nil && previous != token.hex, registeredAt: registeredAt)
        }
        return nil
    }

    /// Removes a device's push-to-start token for an activity type. Returns false if there was none. With
    /// `registeredBy` (a register-only key), a device that key did not register is refused (`notOwnDevice`).
    @discardableResult
    public func deleteStartToken(app: String, device: DeviceToken, activityType: String, registeredBy: Int64? = nil)
        async throws(StoreError) -> Bool
    {
        try await run("deleting a push-to-start token") {
            try await client.withTransaction(logger: logger) { connection in
                try await Self.requireOwnDevice(
                    app: app, device: device, registeredBy: registeredBy, on: connection, logger: logger)
                let rows = try await connection.query(
                    """
                    DELETE FROM activity_start_tokens
                    WHERE app_id = \(app) AND device_token = \(device.hex) AND activity_type = \(activityType)
                    RETURNING 1
                    """,
                    logger: logger)
                for try await _ in rows { return true }
                return false
            }
        }
    }

    /// Removes an activity's update tokens: the one of `device`, or with no device those of every device (of the
    /// register-only key `registeredBy`'s own devices only, if given). Returns how many were removed. With a device
    /// and `registeredBy`, a device that key did not register is refused (`notOwnDevice`).
    @discardableResult
    public func deleteUpdateTokens(
        app: String, activityID: String, device: DeviceToken? = nil, registeredBy: Int64? = nil
    ) async throws(StoreError) -> Int {
        let restricted = registeredBy != nil
        let deviceHex = device?.hex
        return try await run("deleting update tokens") {
            try await client.withTransaction(logger: logger) { connection in
                if let device {
                    try await Self.requireOwnDevice(
                        app: app, device: device, registeredBy: registeredBy, on: connection, logger: logger)
                }
                let rows = try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM activity_update_tokens u
                        WHERE u.app_id = \(app) AND u.activity_id = \(activityID)
                          AND (\(deviceHex)::text IS NULL OR u.device_token = \(deviceHex))
                          AND (NOT \(restricted) OR EXISTS (
                                SELECT 1 FROM devices d
                                WHERE d.app_id = u.app_id AND d.token = u.device_token
                                  AND d.registered_by = \(registeredBy)))
                        RETURNING 1)
                    SELECT count(*)::bigint FROM gone
                    """,
                    logger: logger)
                for try await count in rows.decode(Int64.self) { return Int(count) }
                return 0
            }
        }
    }

    /// With a register-only key, refuses a device that exists and was registered otherwise. An unknown device passes:
    /// it has no tokens to remove.
    private static func requireOwnDevice(
        app: String, device: DeviceToken, registeredBy: Int64?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard let registeredBy else { return }
        let rows = try await connection.query(
            "SELECT registered_by FROM devices WHERE app_id = \(app) AND token = \(device.hex) FOR KEY SHARE",
            logger: logger)
        for try await owner in rows.decode(Int64?.self) where owner != registeredBy {
            throw notOwnActivityDevice()
        }
    }

    private static func deviceNotRegistered() -> StoreError {
        StoreError.permanent(.deviceNotRegistered, "the device is not registered for this app")
    }

    /// The refusal of a register-only key's change to the tokens of a device it did not register.
    private static func notOwnActivityDevice() -> StoreError {
        StoreError.permanent(
            .notOwnDevice,
            "the device was not registered with this key, and a register-only key changes only its own devices")
    }
}
