import Logging
import PostgresNIO

/// An API key as the store holds it: never the key itself, only its SHA-256 and a short prefix to tell keys apart.
public struct StoredAPIKey: Sendable, Hashable {
    public var id: Int64
    public var app: String
    public var prefix: String
    public var label: String?
    /// Microseconds since 1970.
    public var createdAt: Int64
    public var revoked: Bool
}

extension Store {
    /// Records a new key for `app` by its hash (lowercase hex SHA-256). Returns the key's id.
    public func createAPIKey(app: String, hash: String, prefix: String, label: String?) async throws(StoreError)
        -> Int64
    {
        try await run("creating an API key") {
            let rows = try await client.query(
                """
                INSERT INTO api_keys (app_id, key_hash, key_prefix, label) VALUES (\(app), \(hash), \(prefix), \(label))
                RETURNING id
                """,
                logger: logger
            )
            for try await id in rows.decode(Int64.self) { return id }
            throw StoreError(.queryFailed, "creating an API key returned no id")
        }
    }

    /// The app whose unrevoked key has this hash, if any.
    public func app(forAPIKeyHash hash: String) async throws(StoreError) -> String? {
        try await run("checking an API key") {
            let rows = try await client.query(
                "SELECT app_id FROM api_keys WHERE key_hash = \(hash) AND revoked_at IS NULL",
                logger: logger
            )
            for try await app in rows.decode(String.self) { return app }
            return nil
        }
    }

    /// The keys of `app` (or of every app), oldest first.
    public func apiKeys(app: String?) async throws(StoreError) -> [StoredAPIKey] {
        try await run("listing API keys") {
            let rows = try await client.query(
                """
                SELECT id, app_id, key_prefix, label, (extract(epoch FROM created_at) * 1000000)::bigint,
                       revoked_at IS NOT NULL
                FROM api_keys WHERE (\(app)::text IS NULL OR app_id = \(app)) ORDER BY id
                """,
                logger: logger
            )
            var keys: [StoredAPIKey] = []
            for try await (id, app, prefix, label, created, revoked) in rows.decode(
                (Int64, String, String, String?, Int64, Bool).self
            ) {
                keys.append(
                    StoredAPIKey(id: id, app: app, prefix: prefix, label: label, createdAt: created, revoked: revoked))
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
