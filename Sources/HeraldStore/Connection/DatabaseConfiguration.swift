import Foundation
import NIOSSL
import PostgresNIO

/// How a database connection uses TLS: the `sslmode` of the URL, for the modes libpq defines that never send in
/// plain text once TLS is asked for. Herald never turns certificate checks off, so `require` checks the
/// certificate as `verify-full` does (libpq's `require` checks it only when a root certificate is given).
public enum DatabaseTLSMode: String, Sendable, CaseIterable {
    /// Plain TCP: loopback and private networks.
    case disable
    /// TLS, with the server's certificate and host name checked (as `verify-full`).
    case require
    /// TLS, with the server's certificate checked against the CA (`sslrootcert`, required), not its host name.
    case verifyCA = "verify-ca"
    /// TLS, with the server's certificate and host name checked.
    case verifyFull = "verify-full"
}

/// How to reach PostgreSQL, read from a `postgres://user:pass@host:port/db` URL (`HERALD_DATABASE_URL`).
public struct DatabaseConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// `?sslmode=`: default `disable` (plain TCP), which suits loopback and private networks.
    public var tlsMode: DatabaseTLSMode
    /// `?sslrootcert=`: a PEM file of the CA certificates the server's certificate is checked against; without it,
    /// the system's trust store. Read when the URL is parsed, so that a missing file is an error that names it.
    public private(set) var rootCertificateFile: String?
    private var rootCertificates: [NIOSSLCertificate] = []
    /// Connections in the pool.
    public var maximumConnections: Int = 8

    /// Whether connections use TLS.
    public var requireTLS: Bool { tlsMode != .disable }

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
        var mode = DatabaseTLSMode.disable
        var rootCertificateFile: String? = nil
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                if value == "prefer" || value == "allow" {
                    throw StoreError(
                        .invalidURL,
                        "sslmode=\(value) is not supported: it falls back to plain TCP without saying so; use "
                            + "sslmode=verify-full (or verify-ca with sslrootcert), or sslmode=disable on a trusted network"
                    )
                }
                guard let parsed = DatabaseTLSMode(rawValue: value) else {
                    throw StoreError(
                        .invalidURL,
                        "sslmode=\(value.prefix(40)) is not a TLS mode; use disable, require, verify-ca or verify-full")
                }
                mode = parsed
            case "sslrootcert":
                guard !value.isEmpty, value.utf8.count <= 4096 else {
                    throw StoreError(.invalidURL, "sslrootcert must name a PEM file of CA certificates")
                }
                rootCertificateFile = value
            default:
                throw StoreError(
                    .invalidURL,
                    "the database URL parameter \(item.name.prefix(40)) is not supported; Herald reads sslmode and "
                        + "sslrootcert")
            }
        }
        if rootCertificateFile != nil && mode == .disable {
            throw StoreError(.invalidURL, "sslrootcert is given but sslmode is disable; use sslmode=verify-full")
        }
        // verify-ca checks no host name: against the system's trust store, any certificate any public CA issued
        // for any name would do. libpq itself refuses verify-ca without a root certificate.
        if rootCertificateFile == nil && mode == .verifyCA {
            throw StoreError(
                .invalidURL,
                "sslmode=verify-ca needs sslrootcert (the CA that signs your database servers): it checks no host "
                    + "name, so the system's trust store would accept any public certificate; add "
                    + "sslrootcert=/path/to/ca.pem, or use sslmode=verify-full")
        }
        self.tlsMode = mode
        if let rootCertificateFile {
            guard FileManager.default.isReadableFile(atPath: rootCertificateFile) else {
                throw StoreError(.invalidURL, "sslrootcert \(rootCertificateFile): no readable file there")
            }
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(rootCertificateFile)
            } catch {
                throw StoreError(.invalidURL, "sslrootcert \(rootCertificateFile) is not a file of PEM certificates")
            }
            guard !certificates.isEmpty else {
                throw StoreError(.invalidURL, "sslrootcert \(rootCertificateFile) holds no certificate")
            }
            self.rootCertificateFile = rootCertificateFile
            self.rootCertificates = certificates
        }
    }

    /// The TLS settings of `tlsMode`, nil for `disable`.
    public var tlsConfiguration: TLSConfiguration? {
        guard tlsMode != .disable else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = tlsMode == .verifyCA ? .noHostnameVerification : .fullVerification
        if !rootCertificates.isEmpty { tls.trustRoots = .certificates(rootCertificates) }
        return tls
    }

    /// The same server with another database name (tests create throwaway databases).
    public func with(database: String) -> DatabaseConfiguration {
        var copy = self
        copy.database = database
        return copy
    }

    /// A single connection's configuration with the pool's settings (TLS included), for the connections Herald
    /// holds outside the pool (planning claims) and for tests that must see a connection fail rather than retry.
    public func connectionConfiguration() throws(StoreError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        if let settings = tlsConfiguration {
            do {
                tls = .require(try NIOSSLContext(configuration: settings))
            } catch {
                throw StoreError(.invalidURL, "cannot set up TLS for the database", underlying: error)
            }
        } else {
            tls = .disable
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// The PostgresNIO client configuration.
    public var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = tlsConfiguration.map { .require($0) } ?? .disable
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
        var query: [URLQueryItem] = []
        if tlsMode != .disable { query.append(URLQueryItem(name: "sslmode", value: tlsMode.rawValue)) }
        if let rootCertificateFile { query.append(URLQueryItem(name: "sslrootcert", value: rootCertificateFile)) }
        if !query.isEmpty { components.queryItems = query }
        return components.string ?? ""
    }
}
