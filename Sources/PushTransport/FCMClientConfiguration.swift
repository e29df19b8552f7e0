/// How an ``FCMClient`` reaches FCM HTTP v1: the endpoint, the project, trust, pool size and timeouts. The
/// credential is the client's ``FCMAccessTokens``.
public struct FCMClientConfiguration: Sendable {
    /// Where to connect: `fcm.googleapis.com:443` unless the apps file overrides it.
    public var endpoint: HTTP2Endpoint
    /// The Firebase project the messages are sent for (its id or number).
    public var projectID: String
    /// Extra CA certificates (PEM text) trusted in addition to the system roots (for a simulator or a proxy).
    public var additionalTrustRootsPEM: [String] = []
    /// How many HTTP/2 connections the pool may open; they open as the load needs them.
    public var connections: Int = 10
    /// The most streams one connection opens: Google's front end answers more than 100 with GOAWAY.
    public var maximumStreamsPerConnection: Int = 100
    /// How long one attempt may wait for its answer (queued for a stream plus in flight).
    public var requestTimeout: Duration = .seconds(10)
    /// The most requests the client holds at once (waiting for a stream or in flight); further sends wait.
    public var maximumQueuedRequests: Int = 10_000
    /// How long TCP connect plus the TLS handshake may take.
    public var connectTimeout: Duration = .seconds(10)
    /// How long a connection may sit without traffic before a PING checks it; nil disables the check.
    public var pingInterval: Duration? = .seconds(60)

    public init(
        endpoint: HTTP2Endpoint = .fcm, projectID: String, additionalTrustRootsPEM: [String] = [],
        connections: Int = 10
    ) {
        self.endpoint = endpoint
        self.projectID = projectID
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
        self.connections = connections
    }

    /// `/v1/projects/<project>/messages:send`.
    var sendPath: String { "/v1/projects/\(projectID)/messages:send" }

    /// What each pooled connection needs.
    var connectionSettings: HTTP2ConnectionSettings {
        HTTP2ConnectionSettings(
            endpoint: endpoint, clientCertificate: nil, additionalTrustRootsPEM: additionalTrustRootsPEM,
            connections: connections, maximumQueuedRequests: maximumQueuedRequests, requestTimeout: requestTimeout,
            connectTimeout: connectTimeout, pingInterval: pingInterval,
            maximumStreamsPerConnection: maximumStreamsPerConnection, label: "fcm")
    }
}

extension HTTP2Endpoint {
    /// FCM's endpoint, `fcm.googleapis.com:443`.
    public static let fcm = HTTP2Endpoint(host: "fcm.googleapis.com", port: 443)
}

/// Where an ``FCMClient`` gets its OAuth 2.0 access tokens: one token per service account per process, shared by
/// every send, refreshed before it expires with one refresh in flight (FCMCore's `FCMAccessTokenCache`).
public protocol FCMAccessTokens: Sendable {
    /// The token to send with now; waits for the one refresh in flight when there is one.
    func currentToken() async throws -> String
    /// FCM answered 401 UNAUTHENTICATED to `token`: forget it if it is still the current one, so that the next
    /// `currentToken()` mints a new one (once, however many sends saw the 401).
    func rejected(_ token: String)
}
