import APNSCore
import NIOSSL

/// How an ``APNSClient`` reaches APNs: the endpoint, the credential, trust, pool size, timeouts and queue bound.
public struct APNSClientConfiguration: Sendable {
    /// An APNs host and port.
    public typealias Endpoint = HTTP2Endpoint

    /// The credential the client presents.
    public enum Authentication: Sendable {
        /// Token-based: every request carries `authorization: bearer <JWT>` from the shared cache.
        case token(ProviderTokenCache)
        /// Certificate-based: the TLS client certificate (with its chain) identifies the provider; requests carry
        /// no `authorization` header.
        case certificate(chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)

        /// Certificate-based authentication from a PKCS#12 bundle (Apple's `.p12` export) and its passphrase.
        /// The passphrase is used only to open the bundle and is not kept.
        public static func certificate(
            p12Path: String,
            passphrase: String
        ) throws(TransportError) -> Authentication {
            try certificate { try NIOSSLPKCS12Bundle(file: p12Path, passphrase: Array(passphrase.utf8)) }
        }

        /// Certificate-based authentication from the bytes of a PKCS#12 bundle and its passphrase.
        public static func certificate(
            p12Bytes: [UInt8],
            passphrase: String
        ) throws(TransportError) -> Authentication {
            try certificate { try NIOSSLPKCS12Bundle(buffer: p12Bytes, passphrase: Array(passphrase.utf8)) }
        }

        private static func certificate(
            opening open: () throws -> NIOSSLPKCS12Bundle
        ) throws(TransportError) -> Authentication {
            do {
                let bundle = try open()
                return .certificate(chain: bundle.certificateChain, privateKey: bundle.privateKey)
            } catch {
                throw TransportError(.tlsFailed, "cannot open the PKCS#12 bundle", underlying: error)
            }
        }
    }

    /// Where to connect.
    public var endpoint: Endpoint
    /// The credential.
    public var authentication: Authentication
    /// Extra CA certificates (PEM text) trusted in addition to the system roots (for a simulator or a proxy).
    public var additionalTrustRootsPEM: [String] = []
    /// How many HTTP/2 connections the pool keeps to the endpoint.
    public var connections: Int = 2
    /// How long one attempt may wait for its answer (queued for a stream plus in flight) before failing with
    /// ``TransportError/Code/timeout``.
    public var requestTimeout: Duration = .seconds(10)
    /// The most requests the client holds at once (waiting for a stream or in flight); further `send` calls wait.
    public var maximumQueuedRequests: Int = 10_000
    /// How long TCP connect plus the TLS handshake may take.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a connection may sit without traffic before a PING checks it; nil disables the check.
    public var pingInterval: Duration? = .seconds(60)

    public init(
        endpoint: Endpoint,
        authentication: Authentication,
        additionalTrustRootsPEM: [String] = [],
        connections: Int = 2,
        requestTimeout: Duration = .seconds(10)
    ) {
        self.endpoint = endpoint
        self.authentication = authentication
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
        self.connections = connections
        self.requestTimeout = requestTimeout
    }

    /// What each pooled connection needs.
    var connectionSettings: HTTP2ConnectionSettings {
        var clientCertificate: (chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)? = nil
        if case .certificate(let chain, let privateKey) = authentication { clientCertificate = (chain, privateKey) }
        return HTTP2ConnectionSettings(
            endpoint: endpoint, clientCertificate: clientCertificate, additionalTrustRootsPEM: additionalTrustRootsPEM,
            connections: connections, maximumQueuedRequests: maximumQueuedRequests, requestTimeout: requestTimeout,
            connectTimeout: connectTimeout, pingInterval: pingInterval, label: "apns")
    }
}

extension HTTP2Endpoint {
    /// APNs' production endpoint, `api.push.apple.com:443`.
    public static let production = HTTP2Endpoint(host: "api.push.apple.com", port: 443)
    /// APNs' development endpoint, `api.sandbox.push.apple.com:443`.
    public static let sandbox = HTTP2Endpoint(host: "api.sandbox.push.apple.com", port: 443)
}
