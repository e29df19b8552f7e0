import CRabbitMQ
import Glibc

extension ConnectionLoop {
    /// Opens the TCP (or TLS) socket and performs the AMQP handshake, blocking this (dedicated) thread.
    /// On failure nothing of the attempt is left behind.
    func open() -> Result<Void, AMQPError> {
        let result = openSocketAndLogIn()
        if case .failure = result { destroyConnection() }
        return result
    }

    private func openSocketAndLogIn() -> Result<Void, AMQPError> {
        guard let connection = amqp_new_connection() else {
            return .failure(AMQPError(.connectionFailed, "amqp_new_connection failed"))
        }
        self.connection = connection
        let socket: OpaquePointer
        switch makeSocket(connection) {
        case .success(let made): socket = made
        case .failure(let error): return .failure(error)
        }
        var timeout = timeval(configuration.connectTimeout)
        let status = amqp_socket_open_noblock(socket, configuration.host, Int32(configuration.port), &timeout)
        guard status == AMQP_STATUS_OK.rawValue else {
            return .failure(connectionFailure(.status(status)))
        }
        _ = amqp_set_handshake_timeout(connection, &timeout)

        var properties = clientProperties()
        let heartbeatSeconds = Int32(clamping: configuration.heartbeat.components.seconds)
        let reply = herald_amqp_login_plain(
            connection, configuration.vhost, 0, 131_072, heartbeatSeconds, &properties,
            configuration.user, configuration.password)
        pool.recycle()
        guard reply.reply_type == AMQP_RESPONSE_NORMAL else {
            return .failure(connectionFailure(.reply(reply)))
        }
        heartbeat = .seconds(amqp_get_heartbeat(connection))
        channelMax = Int(amqp_get_channel_max(connection))
        amqp_maybe_release_buffers(connection)
        logger.debug(
            "AMQP connection open",
            metadata: [LogKey.vhost: "\(configuration.vhost)", LogKey.heartbeat: "\(heartbeat)"])
        return .success(())
    }

    /// A plain TCP socket, or for `amqps` a TLS one that verifies the broker's certificate chain against the
    /// configured CA and its name against the host (always: there is no switch to turn verification off).
    private func makeSocket(_ connection: amqp_connection_state_t) -> Result<OpaquePointer, AMQPError> {
        guard let tls = configuration.tls else {
            guard let socket = amqp_tcp_socket_new(connection) else {
                return .failure(AMQPError(.connectionFailed, "amqp_tcp_socket_new failed"))
            }
            return .success(socket)
        }
        guard let socket = amqp_ssl_socket_new(connection) else {
            return .failure(AMQPError(.connectionFailed, "amqp_ssl_socket_new failed"))
        }
        amqp_ssl_socket_set_verify_peer(socket, 1)
        amqp_ssl_socket_set_verify_hostname(socket, 1)
        guard amqp_ssl_socket_set_cacert(socket, tls.caCertificatePath) == AMQP_STATUS_OK.rawValue else {
            return .failure(
                AMQPError(.connectionFailed, "cannot load the CA certificates from \(tls.caCertificatePath)"))
        }
        if let certificate = tls.certificatePath, let key = tls.keyPath {
            guard amqp_ssl_socket_set_key(socket, certificate, key) == AMQP_STATUS_OK.rawValue else {
                return .failure(AMQPError(.connectionFailed, "cannot load the client certificate \(certificate)"))
            }
        }
        return .success(socket)
    }

    private func connectionFailure(_ failure: LibraryFailure) -> AMQPError {
        var error = AMQPError.translate(failure, phase: .connecting)
        error.message =
            "connecting to \(configuration.host):\(configuration.port) vhost \(configuration.vhost): "
            + error.message
        logger.debug("AMQP connection failed", metadata: [LogKey.error: "\(error)"])
        return error
    }

    /// connection_name for `rabbitmqctl`, and the capabilities this client handles (merged by rabbitmq-c
    /// with its own, which include authentication_failure_close: a bad password is then reported as
    /// connection.close 403 instead of a dropped socket).
    private func clientProperties() -> amqp_table_t {
        var properties: AMQPTable = [
            "capabilities": [
                "publisher_confirms": true,
                "basic.nack": true,
                "consumer_cancel_notify": true,
                "connection.blocked": true,
            ]
        ]
        if let connectionName = configuration.connectionName {
            properties["connection_name"] = .string(connectionName)
        }
        return properties.encoded(in: pool)
    }
}

extension timeval {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
