import NIOCore
import NIOSSL

/// A host and port a client connects to.
public struct HTTP2Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host name (also the TLS server name) or an IP address literal.
    public var host: String
    /// The TCP port.
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }

    /// The `:authority` value: the host, with `:port` when it is not 443.
    var authority: String { port == 443 ? host : "\(host):\(port)" }
}

/// What one pooled HTTP/2 connection needs, whichever provider it serves: where to connect, the TLS identity and
/// trust, and its timeouts. Each provider's client configuration provides it.
struct HTTP2ConnectionSettings: Sendable {
    /// Where to connect.
    var endpoint: HTTP2Endpoint
    /// A TLS client certificate and key (APNs' certificate auth); nil for bearer-token credentials.
    var clientCertificate: (chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)?
    /// Extra CA certificates (PEM text) trusted in addition to the system roots.
    var additionalTrustRootsPEM: [String]
    /// How many connections the pool keeps.
    var connections: Int
    /// The most requests held at once.
    var maximumQueuedRequests: Int
    /// How long one attempt may wait for its answer.
    var requestTimeout: Duration
    /// How long TCP connect plus the TLS handshake may take.
    var connectTimeout: Duration
    /// How long a connection may sit idle before a PING checks it; nil disables the check.
    var pingInterval: Duration?
    /// The most streams one connection opens, whatever the server allows (FCM's front end refuses more than 100
    /// with GOAWAY rather than with its SETTINGS); nil follows the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    var maximumStreamsPerConnection: Int? = nil
    /// The provider, for log metadata and metric names: `apns`, `fcm`.
    var label: String
    /// The protocols offered by ALPN, `h2` first. Web Push also offers `http/1.1`, so that a service without HTTP/2
    /// that follows RFC 7301 picks it (and the client falls back) rather than ending the handshake with
    /// `no_application_protocol`.
    var applicationProtocols: [String] = ["h2"]

    /// The provider as log messages name it: `APNs`, `FCM`.
    var providerName: String {
        switch label {
        case "apns": "APNs"
        case "webpush": "Web Push"
        default: label.uppercased()
        }
    }
}
