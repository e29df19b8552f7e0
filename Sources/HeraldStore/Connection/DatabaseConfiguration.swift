import Foundation
import PostgresNIO

/// How to reach PostgreSQL, read from a `postgres://user:pass@host:port/db` URL (`HERALD_DATABASE_URL`).
public struct DatabaseConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// Require TLS (`?sslmode=require`); default is plain TCP, which suits loopback and private networks.
    public var requireTLS: Bool
    /// Connections in the pool.
    public var maximumConnections: Int = 8

    /// Parses a `postgres://` or `postgresql://` URL.
    public init(url: String) throws(StoreError) {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty
        else {
            throw StoreError(.invalidURL, "database URL must look like postgres://user:pass@host:port/database")
        }
        guard let user = components.user, !user.isEmpty else {
            throw StoreError(.invalidURL, "database URL has no user name")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw StoreError(.invalidURL, "database URL has no database name") }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value
        self.requireTLS = sslmode == "require" || sslmode == "verify-full"
    }

    /// The same server with another database name (tests create throwaway databases).
    public func with(database: String) -> DatabaseConfiguration {
        var copy = self
        copy.database = database
        return copy
    }

    /// The PostgresNIO client configuration.
    public var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = requireTLS ? .require(.makeClientConfiguration()) : .disable
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
        configuration.options.maximumConnections = maximumConnections
        // Herald's prepared statements (the small-job group statements) are planned for their arguments each time:
        // a generic plan made while the jobs table was small scanned the whole table for every group as it grew.
        // They are still parsed and analysed only once per connection.
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_custom_plan")]
        return configuration
    }

    /// Redacted: no password.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}

extension DatabaseConfiguration {
    /// The URL form, password included: for handing to a child process's environment, never for logs.
    public var url: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.host = host
        components.port = port
        components.user = username
        components.password = password
        components.path = "/" + database
        if requireTLS { components.queryItems = [URLQueryItem(name: "sslmode", value: "require")] }
        return components.string ?? ""
    }
}
