import CRabbitMQ
import Glibc

extension ConnectionLoop {
    /// Opens the TCP socket and performs the AMQP handshake, blocking this (dedicated) thread.
    func open() -> Result<Void, AMQPError> {
        guard let connection = amqp_new_connection() else {
            return .failure(AMQPError(.connectionFailed, "amqp_new_connection failed"))
        }
        self.connection = connection
        guard let socket = amqp_tcp_socket_new(connection) else {
            return .failure(AMQPError(.connectionFailed, "amqp_tcp_socket_new failed"))
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
