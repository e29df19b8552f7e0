import CRabbitMQ

/// A synchronous AMQP method that the connection thread sends without blocking: the reply is matched
/// when its frame arrives, so deliveries and confirms keep flowing meanwhile.
enum RPCRequest: Sendable {
    case channelOpen
    case channelClose
    case confirmSelect
    case basicQos(prefetch: UInt16)
    case basicConsume(queue: String, consumerTag: String)
    case basicCancel(consumerTag: String)
    case queueDeclare(QueueDeclaration)
    case queueDelete(String)
    case queuePurge(String)
    case exchangeDeclare(name: String, type: String, durable: Bool, passive: Bool)
    case exchangeDelete(String)
    case queueBind(queue: String, exchange: String, routingKey: String)
    /// basic.get with manual acknowledgement: answered by get-ok and the message's content, or by get-empty.
    case basicGet(queue: String)

    /// The method that answers this request on the same channel.
    var replyMethod: amqp_method_number_t {
        switch self {
        case .channelOpen: AMQP_CHANNEL_OPEN_OK_METHOD
        case .channelClose: AMQP_CHANNEL_CLOSE_OK_METHOD
        case .confirmSelect: AMQP_CONFIRM_SELECT_OK_METHOD
        case .basicQos: AMQP_BASIC_QOS_OK_METHOD
        case .basicConsume: AMQP_BASIC_CONSUME_OK_METHOD
        case .basicCancel: AMQP_BASIC_CANCEL_OK_METHOD
        case .queueDeclare: AMQP_QUEUE_DECLARE_OK_METHOD
        case .queueDelete: AMQP_QUEUE_DELETE_OK_METHOD
        case .queuePurge: AMQP_QUEUE_PURGE_OK_METHOD
        case .exchangeDeclare: AMQP_EXCHANGE_DECLARE_OK_METHOD
        case .exchangeDelete: AMQP_EXCHANGE_DELETE_OK_METHOD
        case .queueBind: AMQP_QUEUE_BIND_OK_METHOD
        case .basicGet: AMQP_BASIC_GET_OK_METHOD
        }
    }

    /// Whether `method` answers this request: its reply method, or for basic.get also get-empty. (basic.get-ok
    /// completes the request only once its content has arrived: `ConnectionLoop.complete(_:)`.)
    func isAnswered(by method: amqp_method_number_t) -> Bool {
        if case .basicGet = self { return method == AMQP_BASIC_GET_EMPTY_METHOD }
        return method == replyMethod
    }

    /// Writes the method frame; returns the rabbitmq-c status.
    func send(on channel: UInt16, connection: amqp_connection_state_t, pool: ScratchPool) -> Int32 {
        switch self {
        case .channelOpen:
            var method = amqp_channel_open_t(out_of_band: amqp_bytes_t(len: 0, bytes: nil))
            return amqp_send_method(connection, channel, AMQP_CHANNEL_OPEN_METHOD, &method)
        case .channelClose:
            var method = amqp_channel_close_t(
                reply_code: UInt16(AMQP_REPLY_SUCCESS), reply_text: pool.bytes("closed by client"),
                class_id: 0, method_id: 0)
            return amqp_send_method(connection, channel, AMQP_CHANNEL_CLOSE_METHOD, &method)
        case .confirmSelect:
            var method = amqp_confirm_select_t(nowait: 0)
            return amqp_send_method(connection, channel, AMQP_CONFIRM_SELECT_METHOD, &method)
        case .basicQos(let prefetch):
            var method = amqp_basic_qos_t(prefetch_size: 0, prefetch_count: prefetch, global: 0)
            return amqp_send_method(connection, channel, AMQP_BASIC_QOS_METHOD, &method)
        case .basicConsume(let queue, let consumerTag):
            var method = amqp_basic_consume_t(
                ticket: 0, queue: pool.bytes(queue), consumer_tag: pool.bytes(consumerTag), no_local: 0,
                no_ack: 0, exclusive: 0, nowait: 0, arguments: amqp_table_t(num_entries: 0, entries: nil))
            return amqp_send_method(connection, channel, AMQP_BASIC_CONSUME_METHOD, &method)
        case .basicCancel(let consumerTag):
            var method = amqp_basic_cancel_t(consumer_tag: pool.bytes(consumerTag), nowait: 0)
            return amqp_send_method(connection, channel, AMQP_BASIC_CANCEL_METHOD, &method)
        case .queueDeclare(let declaration):
            var method = amqp_queue_declare_t(
                ticket: 0, queue: pool.bytes(declaration.name), passive: declaration.passive ? 1 : 0,
                durable: declaration.durable ? 1 : 0, exclusive: declaration.exclusive ? 1 : 0,
                auto_delete: declaration.autoDelete ? 1 : 0, nowait: 0,
                arguments: declaration.arguments.encoded(in: pool))
            return amqp_send_method(connection, channel, AMQP_QUEUE_DECLARE_METHOD, &method)
        case .queueDelete(let queue):
            var method = amqp_queue_delete_t(ticket: 0, queue: pool.bytes(queue), if_unused: 0, if_empty: 0, nowait: 0)
            return amqp_send_method(connection, channel, AMQP_QUEUE_DELETE_METHOD, &method)
        case .queuePurge(let queue):
            var method = amqp_queue_purge_t(ticket: 0, queue: pool.bytes(queue), nowait: 0)
            return amqp_send_method(connection, channel, AMQP_QUEUE_PURGE_METHOD, &method)
        case .exchangeDeclare(let name, let type, let durable, let passive):
            var method = amqp_exchange_declare_t(
                ticket: 0, exchange: pool.bytes(name), type: pool.bytes(type), passive: passive ? 1 : 0,
                durable: durable ? 1 : 0, auto_delete: 0, internal: 0, nowait: 0,
                arguments: amqp_table_t(num_entries: 0, entries: nil))
            return amqp_send_method(connection, channel, AMQP_EXCHANGE_DECLARE_METHOD, &method)
        case .exchangeDelete(let name):
            var method = amqp_exchange_delete_t(ticket: 0, exchange: pool.bytes(name), if_unused: 0, nowait: 0)
            return amqp_send_method(connection, channel, AMQP_EXCHANGE_DELETE_METHOD, &method)
        case .queueBind(let queue, let exchange, let routingKey):
            var method = amqp_queue_bind_t(
                ticket: 0, queue: pool.bytes(queue), exchange: pool.bytes(exchange),
                routing_key: pool.bytes(routingKey), nowait: 0, arguments: amqp_table_t(num_entries: 0, entries: nil))
            return amqp_send_method(connection, channel, AMQP_QUEUE_BIND_METHOD, &method)
        case .basicGet(let queue):
            var method = amqp_basic_get_t(ticket: 0, queue: pool.bytes(queue), no_ack: 0)
            return amqp_send_method(connection, channel, AMQP_BASIC_GET_METHOD, &method)
        }
    }
}

/// queue.declare arguments.
struct QueueDeclaration: Sendable {
    let name: String
    let passive: Bool
    let durable: Bool
    let exclusive: Bool
    let autoDelete: Bool
    let arguments: AMQPTable
}

/// The parts of RPC replies that callers use, copied out of rabbitmq-c's decoding pool.
enum RPCReply: Sendable {
    case done
    case queueDeclared(messageCount: UInt32, consumerCount: UInt32)
    case messageCount(UInt32)
    case consumerTag(String)
    /// basic.get-ok with the message, which stays unacknowledged until it is settled.
    case got(AMQPDelivery)
    /// basic.get-empty: the queue has no ready message.
    case empty

    /// Copies what matters out of the decoded reply `method`, whose memory rabbitmq-c reuses after this frame.
    init(_ method: amqp_method_t) {
        guard let decoded = method.decoded else {
            self = .done
            return
        }
        switch method.id {
        case AMQP_QUEUE_DECLARE_OK_METHOD:
            let ok = decoded.assumingMemoryBound(to: amqp_queue_declare_ok_t.self).pointee
            self = .queueDeclared(messageCount: ok.message_count, consumerCount: ok.consumer_count)
        case AMQP_QUEUE_DELETE_OK_METHOD:
            self = .messageCount(decoded.assumingMemoryBound(to: amqp_queue_delete_ok_t.self).pointee.message_count)
        case AMQP_QUEUE_PURGE_OK_METHOD:
            self = .messageCount(decoded.assumingMemoryBound(to: amqp_queue_purge_ok_t.self).pointee.message_count)
        case AMQP_BASIC_CONSUME_OK_METHOD:
            let ok = decoded.assumingMemoryBound(to: amqp_basic_consume_ok_t.self).pointee
            self = .consumerTag(String(amqpBytes: ok.consumer_tag))
        case AMQP_BASIC_GET_EMPTY_METHOD:
            self = .empty
        default:
            self = .done
        }
    }
}
