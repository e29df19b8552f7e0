import APNSCore
import FCMCore
import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import WebPushCore

/// A device row as the deliverer needs it.
public struct StoredDevice: Sendable, Hashable {
    public var token: DeviceToken
    public var locale: String?
    /// Microseconds since 1970: what the 410 timestamp rule compares against.
    public var registeredAt: Int64
    /// The APNs environment the device registered with (`production`, `sandbox`), if any.
    public var environment: String?
    /// Which provider reaches the device.
    public var platform: DevicePlatform
    /// For an Android device, the field its token goes in (`token` or `fid`); nil for iOS.
    public var fcmKind: FCMTarget.Kind?
    /// For a web device, its subscription (the token is its endpoint); nil for the other platforms, and for a web
    /// token listed in a job that is not registered (it cannot be encrypted for).
    public var webSubscription: WebPushSubscription?

    public init(
        token: DeviceToken, locale: String?, registeredAt: Int64, environment: String? = nil,
        platform: DevicePlatform = .ios, fcmKind: FCMTarget.Kind? = nil, webSubscription: WebPushSubscription? = nil
    ) {
        self.token = token
        self.locale = locale
        self.registeredAt = registeredAt
        self.environment = environment
        self.platform = platform
        self.fcmKind = fcmKind
        self.webSubscription = webSubscription
    }
}

/// Which devices of an app a page query walks.
public enum DeviceFilter: Sendable, Hashable {
    case users([String])
    case topic(String)
    case all
    /// `topic` or `all`, narrowed to devices whose locale falls under one of the tags (`fr` covers `fr-CA`).
    indirect case locales(DeviceFilter, [String])
}

extension Store {
    /// The registered devices among `tokens` (unknown tokens are simply absent).
    public func devices(app: String, tokens: [DeviceToken]) async throws(StoreError) -> [StoredDevice] {
        guard !tokens.isEmpty else { return [] }
        let hex = tokens.map(\.hex)
        return try await run("looking up devices") {
            let rows = try await client.query(
                """
                SELECT token, locale, (extract(epoch FROM registered_at) * 1000000)::bigint, environment, platform,
                       fcm_kind, \(unescaped: Self.webColumn)
                FROM devices WHERE app_id = \(app) AND token = ANY(\(hex))
                """,
                logger: logger
            )
            return try await Self.collect(rows)
        }
    }

    /// The number of devices an app has.
    public func deviceCount(app: String) async throws(StoreError) -> Int {
        try await run("counting devices") {
            let rows = try await client.query(
                "SELECT count(*)::bigint FROM devices WHERE app_id = \(app)", logger: logger)
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    /// Rows of (token, locale, registered_at_micros, environment, platform, fcm_kind), followed by web when the
    /// statement reads it, as devices.
    static func collect(_ rows: PostgresRowSequence) async throws -> [StoredDevice] {
        var devices: [StoredDevice] = []
        for try await row in rows { devices.append(try detailedDevice(row)) }
        return devices
    }

    /// One row of `collect`, decoded cell by cell: decoding it as a tuple looks the tuple's type up in the runtime's
    /// metadata cache for every row.
    static func detailedDevice(_ row: PostgresRow) throws -> StoredDevice {
        var cells = row.makeIterator()
        guard let token = cells.next(), let locale = cells.next(), let registeredAt = cells.next(),
            let environment = cells.next(), let platform = cells.next(), let kind = cells.next()
        else {
            throw StoreError.permanent(.queryFailed, "a row of devices has fewer than six columns")
        }
        let text = try token.decode(String.self)
        let web = try cells.next()?.decode(String?.self) ?? nil
        return StoredDevice(
            token: DeviceToken(trustedHex: text), locale: try locale.decode(String?.self),
            registeredAt: try registeredAt.decode(Int64.self), environment: try environment.decode(String?.self),
            platform: Self.platform(try platform.decode(String.self)),
            fcmKind: Self.fcmKind(try kind.decode(String?.self)),
            webSubscription: Self.webSubscription(endpoint: text, web: web))
    }

    /// A web device's subscription in one column, NULL for every other device (and then not computed: the CASE
    /// stops at its test): `<p256dh>.<auth>`, followed by `.<expirationTime in ms>` if it has one.
    static let webColumn = """
        CASE WHEN web_keys IS NOT NULL
             THEN web_keys || coalesce('.' || (extract(epoch FROM web_expires_at) * 1000)::bigint::text, '') END
        """

    /// The subscription of `webColumn` (nil for a device of another platform), read without checking it again.
    static func webSubscription(endpoint: String, web: String?) -> WebPushSubscription? {
        guard let web else { return nil }
        let utf8 = web.utf8
        guard let first = utf8.firstIndex(of: UInt8(ascii: ".")),
            let second = utf8[utf8.index(after: first)...].firstIndex(of: UInt8(ascii: "."))
        else {
            return WebPushSubscription(trustedEndpoint: endpoint, storedKeys: web, expirationTime: nil)
        }
        return WebPushSubscription(
            trustedEndpoint: endpoint, storedKeys: String(Substring(utf8[..<second])),
            expirationTime: Int64(Substring(utf8[utf8.index(after: second)...])))
    }

    /// A `platform` column's value (its CHECK allows `ios`, `android` and `web` only).
    static func platform(_ text: String) -> DevicePlatform {
        DevicePlatform(rawValue: text) ?? .ios
    }

    /// An `fcm_kind` column's value: nil for iOS and web (its CHECK allows `token` and `fid` only, for Android).
    static func fcmKind(_ text: String?) -> FCMTarget.Kind? {
        text.flatMap(FCMTarget.Kind.init(rawValue:))
    }
}

extension Store {
    /// Removes every device of an app (the demo starts from a clean registry). Returns how many were removed.
    @discardableResult
    public func deleteDevices(app: String) async throws(StoreError) -> Int {
        try await run("deleting devices") {
            let rows = try await client.query(
                "WITH gone AS (DELETE FROM devices WHERE app_id = \(app) RETURNING 1) SELECT count(*)::bigint FROM gone",
                logger: logger
            )
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }
}
