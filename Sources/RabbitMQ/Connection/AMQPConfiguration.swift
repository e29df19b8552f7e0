/// Where and how to connect to a RabbitMQ broker.
///
/// `description` redacts the password, so a configuration can be logged.
public struct AMQPConfiguration: Sendable, CustomStringConvertible {
    /// Broker host name or IP address.
    public var host: String
    /// Broker port.
    public var port: Int
    /// User name for SASL PLAIN.
    public var user: String
    /// Password for SASL PLAIN; never logged.
    public var password: String
    /// Virtual host.
    public var vhost: String
    /// Requested heartbeat interval (whole seconds; the broker may lower it; zero disables heartbeats).
    public var heartbeat: Duration
    /// Shown by `rabbitmqctl list_connections name` and the management UI.
    public var connectionName: String?
    /// Limit for the TCP connect and, separately, for the AMQP handshake.
    public var connectTimeout: Duration
    /// How long `close()` waits for the broker's connection.close-ok before dropping the socket.
    public var closeTimeout: Duration
    /// Publishes sent but not yet confirmed; further publishes wait in the connection thread until
    /// confirms arrive, so neither this process nor the broker buffers without bound.
    public var maxUnconfirmedPublishes: Int
    /// TLS settings; set for `amqps://` URLs. `nil` is plain TCP.
    public var tls: AMQPTLSConfiguration?
    /// Reconnect after the connection is lost (broker restart, network cut, missed heartbeats) instead of
    /// failing; `nil` (the default) ends the connection at the first loss. See ``AMQPConnection``.
    public var reconnect: ReconnectPolicy?

    /// Creates a configuration from its parts.
    public init(
        host: String = "127.0.0.1",
        port: Int = 5672,
        user: String = "guest",
        password: String = "guest",
        vhost: String = "/",
        heartbeat: Duration = .seconds(30),
        connectionName: String? = nil,
        connectTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(5),
        maxUnconfirmedPublishes: Int = 4096,
        tls: AMQPTLSConfiguration? = nil,
        reconnect: ReconnectPolicy? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.vhost = vhost
        self.heartbeat = heartbeat
        self.connectionName = connectionName
        self.connectTimeout = connectTimeout
        self.closeTimeout = closeTimeout
        self.maxUnconfirmedPublishes = maxUnconfirmedPublishes
        self.tls = tls
        self.reconnect = reconnect
    }

    /// Host, port, user, vhost and heartbeat, with the password replaced by `***`.
    public var description: String {
        let scheme = tls == nil ? "amqp" : "amqps"
        var text = "\(scheme)://\(user):***@\(host):\(port) vhost \(vhost) heartbeat \(heartbeat)"
        if let connectionName { text += " name \(connectionName)" }
        if let tls { text += " ca \(tls.caCertificatePath)" }
        if reconnect != nil { text += " reconnect" }
        return text
    }
}
