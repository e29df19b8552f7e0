import CRabbitMQ

/// A failure as rabbitmq-c or the broker expresses it, before it becomes an ``AMQPError``.
enum LibraryFailure {
    /// A negative `amqp_status_enum` returned by a rabbitmq-c call.
    case status(Int32)
    /// The result of a synchronous rabbitmq-c RPC (only `amqp_login` here).
    case reply(amqp_rpc_reply_t)
    /// A connection.close or channel.close method that the broker sent.
    case serverMethod(amqp_method_t)
}

/// Whether the connection was being established or was already up: the same library status means
/// "could not connect" in the first case and "connection lost" in the second.
enum ConnectionPhase {
    case connecting
    case running
}

extension AMQPError {
    /// The single point where rabbitmq-c statuses, RPC replies and broker close methods become Swift errors.
    static func translate(
        _ failure: LibraryFailure,
        phase: ConnectionPhase,
        file: String = #fileID,
        line: Int = #line
    ) -> AMQPError {
        switch failure {
        case .status(let status):
            var text = String(cString: amqp_error_string2(status))
            let code: Code
            switch amqp_status_enum(rawValue: status) {
            case AMQP_STATUS_TIMEOUT:
                code = phase == .connecting ? .connectionFailed : .timeout
            case AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED, AMQP_STATUS_INCOMPATIBLE_AMQP_VERSION,
                AMQP_STATUS_BROKER_UNSUPPORTED_SASL_METHOD, AMQP_STATUS_SOCKET_INUSE:
                code = .connectionFailed
            case AMQP_STATUS_SSL_PEER_VERIFY_FAILED, AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
                code = .connectionFailed
                text = "TLS verification of the broker failed (\(text)): check the CA file and the host name"
            case AMQP_STATUS_CONNECTION_CLOSED, AMQP_STATUS_SOCKET_ERROR, AMQP_STATUS_SOCKET_CLOSED,
                AMQP_STATUS_HEARTBEAT_TIMEOUT, AMQP_STATUS_TCP_ERROR, AMQP_STATUS_SSL_ERROR,
                AMQP_STATUS_SSL_CONNECTION_FAILED:
                code = phase == .connecting ? .connectionFailed : .connectionClosed
            default:
                code = .protocolError
            }
            return AMQPError(code, text, libraryStatus: status, file: file, line: line)

        case .reply(let reply):
            switch reply.reply_type {
            case AMQP_RESPONSE_NORMAL:
                return AMQPError(.protocolError, "unexpected normal reply", file: file, line: line)
            case AMQP_RESPONSE_LIBRARY_EXCEPTION:
                return translate(.status(reply.library_error), phase: phase, file: file, line: line)
            case AMQP_RESPONSE_SERVER_EXCEPTION:
                return translate(.serverMethod(reply.reply), phase: phase, file: file, line: line)
            default:
                return AMQPError(.protocolError, "no reply from rabbitmq-c", file: file, line: line)
            }

        case .serverMethod(let method):
            guard let decoded = method.decoded else {
                return AMQPError(.protocolError, "server exception without a method", file: file, line: line)
            }
            switch method.id {
            case AMQP_CONNECTION_CLOSE_METHOD:
                let close = decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                let text = String(amqpBytes: close.reply_text)
                let code: Code
                if close.reply_code == UInt16(AMQP_ACCESS_REFUSED) && phase == .connecting {
                    code = .authenticationFailed
                } else {
                    code = phase == .connecting ? .connectionFailed : .connectionClosed
                }
                return AMQPError(
                    code, "broker closed the connection: \(text)", replyCode: close.reply_code,
                    file: file, line: line)
            case AMQP_CHANNEL_CLOSE_METHOD:
                let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                let text = String(amqpBytes: close.reply_text)
                return AMQPError(
                    .channelClosed, "broker closed the channel: \(text)", replyCode: close.reply_code,
                    file: file, line: line)
            default:
                return AMQPError(
                    .protocolError, "unexpected method \(method.id) from the broker",
                    file: file, line: line)
            }
        }
    }
}
