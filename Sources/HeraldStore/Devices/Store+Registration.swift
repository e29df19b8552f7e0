import APNSCore
import FCMCore
import HeraldCore
import Logging
import PostgresNIO
import WebPushCore

/// What a registration does to one field of a device: leave it as stored, clear it, or set it.
public enum FieldUpdate<Value: Sendable & Hashable>: Sendable, Hashable {
    case keep
    case clear
    case set(Value)
}

/// A device registration from the app (seed 000's RegisterDeviceToken, done safely): the new token, optionally the
/// token it replaces, and the fields to change.
public struct DeviceRegistration: Sendable, Hashable {
    public var token: DeviceToken
    /// The device's previous token: its row is removed and its fields carried over unless given here. It is looked
    /// up among the app's devices of the same platform (an Android device may change kind, from a registration
    /// token to an installation id); the new row takes `platform` and `fcmKind`.
    public var oldToken: DeviceToken?
    /// The platform of `token`: a registered token keeps its platform (`StoreError.Code.platformConflict`).
    public var platform: DevicePlatform = .ios
    /// For Android, the kind of `token` (registration token or installation id); nil for iOS.
    public var fcmKind: FCMTarget.Kind? = nil
    /// For a web device, its subscription, whose endpoint is `token`: a registration of a known endpoint writes its
    /// keys and expiration anew (a browser may subscribe again at the same endpoint with new keys).
    public var webSubscription: WebPushSubscription? = nil
    public var userID: FieldUpdate<String>
    public var locale: FieldUpdate<String>
    public var topics: FieldUpdate<[String]>
    /// `production` or `sandbox`.
    public var environment: FieldUpdate<String>
    /// The register-only API key making this registration, if it is one: it may only add devices, refresh the ones
    /// it registered itself and replace their tokens, and it is recorded on the device. Nil for any other caller.
    public var registeredBy: Int64? = nil
    /// With `registeredBy`: the new devices that key may register per hour (every API process together), counted in
    /// `api_key_usage` in the registration's transaction; nil for no quota. A refresh is not counted.
    public var devicesPerHour: Int? = nil

    public init(
        token: DeviceToken,
        oldToken: DeviceToken? = nil,
        userID: FieldUpdate<String> = .keep,
        locale: FieldUpdate<String> = .keep,
        topics: FieldUpdate<[String]> = .keep,
        environment: FieldUpdate<String> = .keep,
        platform: DevicePlatform = .ios,
        fcmKind: FCMTarget.Kind? = nil
    ) {
        self.token = token
        self.oldToken = oldToken
        self.platform = platform
        // An iOS device has no FCM kind; an Android one has one, a registration token unless said otherwise.
        self.fcmKind = platform == .android ? (fcmKind ?? .token) : nil
        self.userID = userID
        self.locale = locale
        self.topics = topics
        self.environment = environment
    }

    /// A web device's registration: its token is the subscription's endpoint; `oldToken`, if any, is the endpoint
    /// it replaces (a `pushsubscriptionchange`).
    public init(
        webSubscription: WebPushSubscription,
        oldToken: DeviceToken? = nil,
        userID: FieldUpdate<String> = .keep,
        locale: FieldUpdate<String> = .keep,
        topics: FieldUpdate<[String]> = .keep
    ) {
        self.init(
            token: DeviceToken(trustedHex: webSubscription.endpoint.url), oldToken: oldToken, userID: userID,
            locale: locale, topics: topics, platform: .web)
        self.webSubscription = webSubscription
    }
}

/// A device with everything the registry holds about it.
public struct RegisteredDevice: Sendable, Hashable {
    public var token: DeviceToken
    public var userID: String?
    public var locale: String?
    public var topics: [String]
    public var environment: String?
    /// Microseconds since 1970: what the 410 timestamp rule compares against.
    public var registeredAt: Int64
    public var badge: Int
    /// Which provider reaches the device.
    public var platform: DevicePlatform = .ios
    /// For an Android device, the field its token goes in (`token` or `fid`); nil for iOS.
    public var fcmKind: FCMTarget.Kind? = nil
    /// For a web device, its subscription (the token is its endpoint); nil for the other platforms.
    public var webSubscription: WebPushSubscription? = nil
}

/// The outcome of a registration.
public struct RegistrationResult: Sendable, Hashable {
    public var device: RegisteredDevice
    /// The token was not registered before.
    public var created: Bool
    /// An old token was given and its row was removed.
    public var replaced: Bool
}

extension Store {
    /// Registers or refreshes a device: upsert, registration time now, badge reset. With an old token, the old row is
    /// removed in the same transaction and its user, locale, topics, environment and registering key carried over
    /// unless given.
    ///
    /// With `registration.registeredBy` (a register-only key), a device registered otherwise is refused, whether it
    /// is the token or the old token: `StoreError.Code.notOwnDevice`, and nothing is written.
    ///
    /// A registered token keeps its platform and FCM kind: a registration that would change them is refused with
    /// `StoreError.Code.platformConflict` (so is an old token registered on another platform), and nothing is
    /// written. The kind of an Android device changes through a replacement (`oldToken`), as when an app moves from
    /// registration tokens to installation ids.
    public func register(_ registration: DeviceRegistration, app: String) async throws(StoreError) -> RegistrationResult
    {
        let key = registration.registeredBy
        let restricted = key != nil
        let platform = registration.platform.rawValue
        let kind = registration.platform == .android ? (registration.fcmKind ?? .token).rawValue : nil
        let web = registration.platform == .web ? registration.webSubscription : nil
        if registration.platform == .web, web == nil {
            throw StoreError.permanent(.queryFailed, "a web device's registration needs its subscription")
        }
        let (webKeys, webExpires) = (web?.keys.stored, web?.expirationTime)
        return try await run("registering a device") {
            try await client.withTransaction(logger: logger) { connection in
                var old: (userID: String?, locale: String?, topics: [String], environment: String?, key: Int64?)? = nil
                if let oldToken = registration.oldToken, oldToken != registration.token {
                    let rows = try await connection.query(
                        """
                        DELETE FROM devices
                        WHERE app_id = \(app) AND token = \(oldToken.hex) AND platform = \(platform)
                          AND (NOT \(restricted) OR registered_by = \(key))
                        RETURNING user_id, locale, topics, environment, registered_by
                        """,
                        logger: logger
                    )
                    for try await (user, locale, topics, environment, key) in rows.decode(
                        (String?, String?, [String], String?, Int64?).self
                    ) {
                        old = (user, locale, topics, environment, key)
                    }
                    if old == nil {
                        // Not removed: unknown (a registration as any other), or kept by a rule that refuses it.
                        let existing = try await Self.registeredRow(app: app, token: oldToken, on: connection, logger)
                        if let existing {
                            if restricted && existing.key != key { throw Self.notOwnDevice("old_token") }
                            if existing.platform != registration.platform {
                                throw Self.platformConflict("old_token", existing.platform, existing.kind)
                            }
                        }
                    }
                }
                let registeredBy = key ?? old?.key
                let replaced = old != nil
                let user = Self.resolve(registration.userID, replaced: replaced, old: old?.userID)
                let locale = Self.resolve(registration.locale, replaced: replaced, old: old?.locale)
                let topics = Self.resolve(registration.topics, replaced: replaced, old: old?.topics)
                let environment = Self.resolve(registration.environment, replaced: replaced, old: old?.environment)
                let topicValues = topics.value ?? []
                let rows = try await connection.query(
                    """
                    INSERT INTO devices AS d (app_id, token, user_id, locale, topics, environment, registered_at, badge,
                                              registered_by, platform, fcm_kind, web_keys, web_expires_at)
                    VALUES (\(app), \(registration.token.hex), \(user.value), \(locale.value), \(topicValues)::text[],
                            \(environment.value), now(), 0, \(registeredBy), \(platform), \(kind), \(webKeys),
                            timestamptz 'epoch' + \(webExpires)::bigint * interval '1 millisecond')
                    ON CONFLICT (app_id, token) DO UPDATE SET
                        user_id = CASE WHEN \(user.set) THEN EXCLUDED.user_id ELSE d.user_id END,
                        locale = CASE WHEN \(locale.set) THEN EXCLUDED.locale ELSE d.locale END,
                        topics = CASE WHEN \(topics.set) THEN EXCLUDED.topics ELSE d.topics END,
                        environment = CASE WHEN \(environment.set) THEN EXCLUDED.environment ELSE d.environment END,
                        registered_at = now(), badge = 0,
                        registered_by = coalesce(EXCLUDED.registered_by, d.registered_by),
                        web_keys = EXCLUDED.web_keys, web_expires_at = EXCLUDED.web_expires_at
                    WHERE (NOT \(restricted) OR d.registered_by = \(key))
                      AND d.platform = EXCLUDED.platform AND d.fcm_kind IS NOT DISTINCT FROM EXCLUDED.fcm_kind
                    RETURNING token, user_id, locale, topics, environment,
                              (extract(epoch FROM registered_at) * 1000000)::bigint, badge, (xmax = 0), platform,
                              fcm_kind, \(unescaped: Self.webColumn)
                    """,
                    logger: logger
                )
                var result: RegistrationResult? = nil
                for try await row in rows {
                    let (token, user, locale, topics, environment, registeredAt, badge, created, platform, kind, web) =
                        try row.decode(
                            (String, String?, String?, [String], String?, Int64, Int32, Bool, String, String?, String?)
                                .self)
                    let device = RegisteredDevice(
                        token: DeviceToken(trustedHex: token), userID: user, locale: locale, topics: topics,
                        environment: environment, registeredAt: registeredAt, badge: Int(badge),
                        platform: Self.platform(platform), fcmKind: Self.fcmKind(kind),
                        webSubscription: Self.webSubscription(endpoint: token, web: web)
                    )
                    result = RegistrationResult(device: device, created: created, replaced: replaced)
                }
                guard let result else {
                    // The upsert's condition kept a register-only key off a device it did not register, or kept the
                    // device's platform: say which.
                    let existing = try await Self.registeredRow(
                        app: app, token: registration.token, on: connection, logger)
                    if let existing {
                        if restricted && existing.key != key { throw Self.notOwnDevice("token") }
                        if existing.platform != registration.platform || existing.kind?.rawValue != kind {
                            throw Self.platformConflict("token", existing.platform, existing.kind)
                        }
                    }
                    throw StoreError(.queryFailed, "registering a device returned no row")
                }
                if result.created, !replaced, let key, let quota = registration.devicesPerHour {
                    try await Self.countNewDevice(key: key, quota: quota, on: connection, logger: logger)
                }
                return result
            }
        }
    }

    /// Counts a new device of register-only key `key` in this hour's row of `api_key_usage` (an upsert, so every
    /// API process counts in the same row, and the row lock orders concurrent registrations of the key). Over
    /// `quota`, throws `quotaExceeded` with the seconds left in the hour, and the caller's transaction (the device
    /// included) rolls back. A new hour's row removes the key's older ones.
    private static func countNewDevice(key: Int64, quota: Int, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        let rows = try await connection.query(
            """
            INSERT INTO api_key_usage AS u (key_id, hour, devices) VALUES (\(key), date_trunc('hour', now()), 1)
            ON CONFLICT (key_id, hour) DO UPDATE SET devices = u.devices + 1
            RETURNING devices, (xmax = 0),
                      ceil(extract(epoch FROM date_trunc('hour', now()) + interval '1 hour' - now()))::bigint
            """,
            logger: logger)
        var usage: (count: Int, fresh: Bool, left: Int64)? = nil
        for try await row in rows.decode((Int, Bool, Int64).self) { usage = row }
        guard let usage else { throw StoreError(.queryFailed, "counting a new device returned no row") }
        guard usage.count <= quota else {
            var error = StoreError.permanent(
                .quotaExceeded,
                "this API key may register \(quota) new devices an hour, and has; refreshing a device it registered"
                    + " is not counted")
            error.retryAfter = max(1, Int(usage.left))
            throw error
        }
        if usage.fresh {
            try await connection.query(
                "DELETE FROM api_key_usage WHERE key_id = \(key) AND hour < date_trunc('hour', now())",
                logger: logger)
        }
    }

    /// The platform, FCM kind and registering key of a registered token, if it is registered.
    private static func registeredRow(
        app: String, token: DeviceToken, on connection: PostgresConnection, _ logger: Logger
    ) async throws -> (platform: DevicePlatform, kind: FCMTarget.Kind?, key: Int64?)? {
        let rows = try await connection.query(
            "SELECT platform, fcm_kind, registered_by FROM devices WHERE app_id = \(app) AND token = \(token.hex)",
            logger: logger)
        for try await (platform, kind, key) in rows.decode((String, String?, Int64?).self) {
            return (Self.platform(platform), Self.fcmKind(kind), key)
        }
        return nil
    }

    /// The refusal of a registration that would change a device's platform or FCM kind (`field` names the token):
    /// the message says what the token is registered as, never the token.
    private static func platformConflict(_ field: String, _ platform: DevicePlatform, _ kind: FCMTarget.Kind?)
        -> StoreError
    {
        let registered =
            switch (platform, kind) {
            case (.ios, _): "an iOS device (platform ios)"
            case (.android, .fid?): "an Android device addressed by installation id (platform android, fcm_kind fid)"
            case (.android, _):
                "an Android device addressed by registration token (platform android, fcm_kind token)"
            case (.web, _): "a web subscription (platform web)"
            }
        let rule =
            field == "old_token"
            ? "a replacement keeps the device's platform"
            : "a registration never changes a device's platform or kind (delete the device to register it anew)"
        return StoreError.permanent(.platformConflict, "the \(field) is registered as \(registered); \(rule)")
    }

    /// The refusal of a register-only key's change to a device it did not register (`field` names the token).
    private static func notOwnDevice(_ field: String) -> StoreError {
        StoreError.permanent(
            .notOwnDevice,
            "the device of \(field) was not registered with this key, and a register-only key changes only its own")
    }

    /// Whether to write a field and its value: given values win; a replaced device's values carry over.
    private static func resolve<T>(_ update: FieldUpdate<T>, replaced: Bool, old: T?) -> (set: Bool, value: T?) {
        switch update {
        case .set(let new): (true, new)
        case .clear: (true, nil)
        case .keep: replaced ? (true, old) : (false, nil)
        }
    }

    /// The device with `token`, if registered.
    public func device(app: String, token: DeviceToken) async throws(StoreError) -> RegisteredDevice? {
        try await run("reading a device") {
            let rows = try await client.query(
                """
                SELECT token, user_id, locale, topics, environment,
                       (extract(epoch FROM registered_at) * 1000000)::bigint, badge, platform, fcm_kind,
                       \(unescaped: Self.webColumn)
                FROM devices WHERE app_id = \(app) AND token = \(token.hex)
                """,
                logger: logger
            )
            return try await Self.collectRegistered(rows).first
        }
    }

    /// The user a device is bound to and the register-only key that registered it (nil: another kind of key or an
    /// import), if the device is registered.
    public func deviceOwner(app: String, token: DeviceToken) async throws(StoreError)
        -> (userID: String?, registeredBy: Int64?)?
    {
        try await run("reading a device's owner") {
            let rows = try await client.query(
                "SELECT user_id, registered_by FROM devices WHERE app_id = \(app) AND token = \(token.hex)",
                logger: logger)
            for try await (user, key) in rows.decode((String?, Int64?).self) { return (user, key) }
            return nil
        }
    }

    /// Removes one device. Returns false if it was not registered.
    public func deleteDevice(app: String, token: DeviceToken) async throws(StoreError) -> Bool {
        try await run("deleting a device") {
            let rows = try await client.query(
                "DELETE FROM devices WHERE app_id = \(app) AND token = \(token.hex) RETURNING 1",
                logger: logger
            )
            for try await _ in rows { return true }
            return false
        }
    }

    /// One keyset page of an app's devices in token order (for `herald devices export`).
    public func registeredDevicesPage(app: String, after: String?, limit: Int) async throws(StoreError)
        -> [RegisteredDevice]
    {
        let cursor = after ?? ""
        return try await run("reading a page of devices") {
            let rows = try await client.query(
                """
                SELECT token, user_id, locale, topics, environment,
                       (extract(epoch FROM registered_at) * 1000000)::bigint, badge, platform, fcm_kind,
                       \(unescaped: Self.webColumn)
                FROM devices WHERE app_id = \(app) AND token > \(cursor) ORDER BY token LIMIT \(limit)
                """,
                logger: logger
            )
            return try await Self.collectRegistered(rows)
        }
    }

    private static func collectRegistered(_ rows: PostgresRowSequence) async throws -> [RegisteredDevice] {
        var devices: [RegisteredDevice] = []
        for try await (token, user, locale, topics, environment, registeredAt, badge, platform, kind, web)
            in rows.decode((String, String?, String?, [String], String?, Int64, Int32, String, String?, String?).self)
        {
            devices.append(
                RegisteredDevice(
                    token: DeviceToken(trustedHex: token), userID: user, locale: locale, topics: topics,
                    environment: environment, registeredAt: registeredAt, badge: Int(badge),
                    platform: Self.platform(platform), fcmKind: Self.fcmKind(kind),
                    webSubscription: Self.webSubscription(endpoint: token, web: web)
                )
            )
        }
        return devices
    }
}
