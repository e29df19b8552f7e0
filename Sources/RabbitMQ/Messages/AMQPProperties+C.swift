import CRabbitMQ

extension AMQPProperties {
    /// Converts decoded basic properties from a content header frame.
    init(_ c: amqp_basic_properties_t) {
        let flags = c._flags
        func has(_ flag: Int32) -> Bool { flags & amqp_flags_t(flag) != 0 }
        func string(_ flag: Int32, _ bytes: amqp_bytes_t) -> String? { has(flag) ? String(amqpBytes: bytes) : nil }
        self.init(
            contentType: string(AMQP_BASIC_CONTENT_TYPE_FLAG, c.content_type),
            contentEncoding: string(AMQP_BASIC_CONTENT_ENCODING_FLAG, c.content_encoding),
            messageID: string(AMQP_BASIC_MESSAGE_ID_FLAG, c.message_id),
            correlationID: string(AMQP_BASIC_CORRELATION_ID_FLAG, c.correlation_id),
            persistent: has(AMQP_BASIC_DELIVERY_MODE_FLAG) && c.delivery_mode == 2,
            headers: has(AMQP_BASIC_HEADERS_FLAG) ? AMQPTable(c.headers) : [:],
            expiration: string(AMQP_BASIC_EXPIRATION_FLAG, c.expiration),
            timestamp: has(AMQP_BASIC_TIMESTAMP_FLAG) ? Int64(truncatingIfNeeded: c.timestamp) : nil,
            priority: has(AMQP_BASIC_PRIORITY_FLAG) ? c.priority : nil,
            type: string(AMQP_BASIC_TYPE_FLAG, c.type),
            appID: string(AMQP_BASIC_APP_ID_FLAG, c.app_id),
            replyTo: string(AMQP_BASIC_REPLY_TO_FLAG, c.reply_to)
        )
    }

    /// Encodes into memory from `pool`, valid until the pool is recycled.
    func encoded(in pool: ScratchPool) -> amqp_basic_properties_t {
        var c = amqp_basic_properties_t()
        var flags = amqp_flags_t(AMQP_BASIC_DELIVERY_MODE_FLAG)
        c.delivery_mode = persistent ? 2 : 1
        func set(_ value: String?, _ flag: Int32, _ field: inout amqp_bytes_t) {
            guard let value else { return }
            field = pool.bytes(value)
            flags |= amqp_flags_t(flag)
        }
        set(contentType, AMQP_BASIC_CONTENT_TYPE_FLAG, &c.content_type)
        set(contentEncoding, AMQP_BASIC_CONTENT_ENCODING_FLAG, &c.content_encoding)
        set(messageID, AMQP_BASIC_MESSAGE_ID_FLAG, &c.message_id)
        set(correlationID, AMQP_BASIC_CORRELATION_ID_FLAG, &c.correlation_id)
        set(expiration, AMQP_BASIC_EXPIRATION_FLAG, &c.expiration)
        set(type, AMQP_BASIC_TYPE_FLAG, &c.type)
        set(appID, AMQP_BASIC_APP_ID_FLAG, &c.app_id)
        set(replyTo, AMQP_BASIC_REPLY_TO_FLAG, &c.reply_to)
        if !headers.isEmpty {
            c.headers = headers.encoded(in: pool)
            flags |= amqp_flags_t(AMQP_BASIC_HEADERS_FLAG)
        }
        if let timestamp {
            c.timestamp = UInt64(truncatingIfNeeded: timestamp)
            flags |= amqp_flags_t(AMQP_BASIC_TIMESTAMP_FLAG)
        }
        if let priority {
            c.priority = priority
            flags |= amqp_flags_t(AMQP_BASIC_PRIORITY_FLAG)
        }
        c._flags = flags
        return c
    }
}
