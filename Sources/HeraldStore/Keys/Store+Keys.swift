import Logging
import PostgresNIO

/// What an API key may do for its app. `admin` is every scope.
public enum APIScope: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Add or refresh a device, and replace its old token: only devices this key registered itself.
    case register
    /// Send notifications, and cancel jobs.
    case send
    /// Read devices, jobs and reports.
    case read
    /// Everything, including deleting devices and restoring pruned ones.
    case admin

    public static func < (lhs: APIScope, rhs: APIScope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// An API key as the store holds it: never the key itself, only its SHA-256 and a short prefix to tell keys apart.
public struct StoredAPIKey: Sendable, Hashable {
    public var id: Int64
    public var app: String
    public var prefix: String
    public var label: String?
    /// Microseconds since 1970.
    public var createdAt: Int64
    public var revoked: Bool
    public var scopes: Set<APIScope>
    /// The key's rate limit in each API process; nil for none.
    public var requestsPerSecond: Int?
    /// New devices the key may register per hour, if it may only register; nil takes the API's default.
    public var devicesPerHour: Int? = nil
    /// Live Activity update tokens the key may register per device, if it may only register; nil takes the API's
    /// default.
    public var activityTokensPerDevice: Int? = nil
}

/// The unrevoked key a request presented: whose it is and what it may do.
public struct AuthenticatedKey: Sendable, Hashable {
    public var id: Int64
    public var app: String
    public var scopes: Set<APIScope>
    public var requestsPerSecond: Int?
    /// The key's own quota of new devices per hour; nil takes the API's default.
    public var devicesPerHour: Int?
    /// The key's own quota of Live Activity update tokens per device; nil takes the API's default.
    public var activityTokensPerDevice: Int?

    public init(
        id: Int64, app: String, scopes: Set<APIScope>, requestsPerSecond: Int?, devicesPerHour: Int? = nil,
        activityTokensPerDevice: Int? = nil
    ) {
        self.id = id
        self.app = app
        self.scopes = scopes
        self.requestsPerSecond = requestsPerSecond
        self.devicesPerHour = devicesPerHour
        self.activityTokensPerDevice = activityTokensPerDevice
    }

    /// Whether the key may act within `scope` (an admin key may do everything).
    public func allows(_ scope: APIScope) -> Bool { scopes.contains(scope) || scopes.contains(.admin) }

    /// A key that may only register: limited to the devices it registered itself.
    public var registersOnly: Bool { !scopes.contains(where: { $0 != .register }) }
}

extension Store {
    /// Records a new key for `app` by its hash (lowercase hex SHA-256), with what it may do, its rate limit and its
    /// quotas (those of a register-only key; nil takes the API's defaults). Returns the key's id.
    public func createAPIKey(
        app: String, hash: String, prefix: String, label: String?, scopes: Set<APIScope> = [.admin],
        requestsPerSecond: Int? = nil, devicesPerHour: Int? = nil, activityTokensPerDevice: Int? = nil
    ) async throws(StoreError) -> Int64 {
        guard !scopes.isEmpty else { throw StoreError.permanent(.queryFailed, "an API key needs at least one scope") }
        let names = scopes.sorted().map(\.rawValue)
        return try await run("creating an API key") {
            let rows = try await client.query(
                """
                INSERT INTO api_keys (app_id, key_hash, key_prefix, label, scopes, requests_per_second,
                                      devices_per_hour, activity_tokens_per_device)
                VALUES (\(app), \(hash), \(prefix), \(label), \(names)::text[], \(requestsPerSecond),
                        \(devicesPerHour), \(activityTokensPerDevice))
                RETURNING id
                """,
                logger: logger
            )
            for try await id in rows.decode(Int64.self) { return id }
            throw StoreError(.queryFailed, "creating an API key returned no id")
        }
    }

    /// The unrevoked key with this hash, if any.
    public func apiKey(forHash hash: String) async throws(StoreError) -> AuthenticatedKey? {
        try await run("checking an API key") {
            let rows = try await client.query(
                """
                SELECT id, app_id, scopes, requests_per_second, devices_per_hour, activity_tokens_per_device
                FROM api_keys WHERE key_hash = \(hash) AND revoked_at IS NULL
                """,
                logger: logger
            )
            for try await (id, app, scopes, rate, devices, activityTokens) in rows.decode(
                (Int64, String, [String], Int?, Int?, Int?).self
            ) {
                return AuthenticatedKey(
                    id: id, app: app, scopes: Set(scopes.compactMap(APIScope.init(rawValue:))),
                    requestsPerSecond: rate, devicesPerHour: devices, activityTokensPerDevice: activityTokens)
            }
            return nil
        }
    }

    /// The keys of `app` (or of every app), oldest first.
    public func apiKeys(app: String?) async throws(StoreError) -> [StoredAPIKey] {
        try await run("listing API keys") {
            let rows = try await client.query(
                """
                SELECT id, app_id, key_prefix, label, (extract(epoch FROM created_at) * 1000000)::bigint,
                       revoked_at IS NOT NULL, scopes, requests_per_second
                FROM api_keys WHERE (\(app)::text IS NULL OR app_id = \(app)) ORDER BY id
                """,
                logger: logger
            )
            var keys: [StoredAPIKey] = []
            for try await (id, app, prefix, label, created, revoked, scopes, rate) in rows.decode(
                (Int64, String, String, String?, Int64, Bool, [String], Int?).self
            ) {
                keys.append(
                    StoredAPIKey(
                        id: id, app: app, prefix: prefix, label: label, createdAt: created, revoked: revoked,
                        scopes: Set(scopes.compactMap(APIScope.init(rawValue:))), requestsPerSecond: rate))
            }
            return keys
        }
    }

    /// Revokes the key with `id` of `app`. Returns false if there is no such unrevoked key.
    public func revokeAPIKey(id: Int64, app: String) async throws(StoreError) -> Bool {
        try await run("revoking an API key") {
            let rows = try await client.query(
                """
                UPDATE api_keys SET revoked_at = now() WHERE id = \(id) AND app_id = \(app) AND revoked_at IS NULL
                RETURNING 1
                """,
                logger: logger
            )
            for try await _ in rows { return true }
            return false
        }
    }
}
