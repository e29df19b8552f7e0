import CRabbitMQ

extension ConnectionLoop {
    /// Dispatches one decoded frame. Its memory belongs to rabbitmq-c and is reused after this returns,
    /// so everything kept is copied.
    func handle(_ frame: amqp_frame_t) {
        switch Int32(frame.frame_type) {
        case AMQP_FRAME_METHOD:
            if frame.channel == 0 {
                handleConnectionMethod(frame.payload.method)
            } else if let channel = channel(frame.channel) {
                handleMethod(frame.payload.method, on: channel)
            }
        case AMQP_FRAME_HEADER:
            guard case .running = phase, let channel = channel(frame.channel) else { return }
            handleHeader(frame, on: channel)
        case AMQP_FRAME_BODY:
            guard case .running = phase, let channel = channel(frame.channel) else { return }
            handleBody(frame.payload.body_fragment, on: channel)
        default:
            return  // heartbeats: rabbitmq-c accounts for them itself
        }
    }

    private func handleConnectionMethod(_ method: amqp_method_t) {
        switch method.id {
        case AMQP_CONNECTION_CLOSE_METHOD:
            if let connection {
                var closeOK = amqp_connection_close_ok_t(dummy: 0)
                _ = amqp_send_method(connection, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &closeOK)
            }
            if case .closing = phase {
                finish(.locallyClosed)  // both sides closed at once
            } else {
                fail(with: .translate(.serverMethod(method), phase: .running))
            }
        case AMQP_CONNECTION_CLOSE_OK_METHOD:
            if case .closing = phase { finish(.locallyClosed) }
        case AMQP_CONNECTION_BLOCKED_METHOD:
            isBlocked = true
            status.update(blocked: true)
            let blocked = method.decoded?.assumingMemoryBound(to: amqp_connection_blocked_t.self).pointee
            logger.info(
                "AMQP broker blocked publishing",
                metadata: [LogKey.reason: "\(blocked.map { String(amqpBytes: $0.reason) } ?? "")"])
        case AMQP_CONNECTION_UNBLOCKED_METHOD:
            isBlocked = false
            status.update(blocked: false)
            logger.info("AMQP broker unblocked publishing")
            drainParked()
        default:
            logger.debug("AMQP unexpected connection method", metadata: [LogKey.reason: "\(method.id)"])
        }
    }

    private func handleMethod(_ method: amqp_method_t, on channel: ChannelState) {
        guard let decoded = method.decoded else {
            // A delivery whose tag is unknown could later be covered by a `multiple` ack without anyone having
            // seen it: give the connection up instead, and the broker requeues every unsettled delivery.
            if method.id == AMQP_BASIC_DELIVER_METHOD {
                fail(with: AMQPError(.protocolError, "a basic.deliver frame could not be decoded"))
            }
            return
        }
        if case .closing = phase {
            // After connection.close only confirms still mean something; nothing may be sent in reply.
            if method.id == AMQP_BASIC_ACK_METHOD || method.id == AMQP_BASIC_NACK_METHOD,
                case .publisher = channel.role
            {
                confirm(decoded, id: method.id)
            }
            return
        }
        switch method.id {
        case AMQP_BASIC_DELIVER_METHOD:
            let deliver = decoded.assumingMemoryBound(to: amqp_basic_deliver_t.self).pointee
            // Open from now on as far as the broker is concerned, whether or not its content arrives whole.
            if case .consumer(let consumer) = channel.role { consumer.unsettled.delivered(deliver.delivery_tag) }
            channel.content = IncomingContent(
                kind: .delivery(deliveryTag: deliver.delivery_tag, redelivered: deliver.redelivered != 0),
                exchange: String(amqpBytes: deliver.exchange), routingKey: String(amqpBytes: deliver.routing_key))
        case AMQP_BASIC_GET_OK_METHOD:
            let ok = decoded.assumingMemoryBound(to: amqp_basic_get_ok_t.self).pointee
            // Unacknowledged from now on, as a consumer's delivery is.
            if case .consumer(let consumer) = channel.role { consumer.unsettled.delivered(ok.delivery_tag) }
            channel.content = IncomingContent(
                kind: .got(deliveryTag: ok.delivery_tag, redelivered: ok.redelivered != 0),
                exchange: String(amqpBytes: ok.exchange), routingKey: String(amqpBytes: ok.routing_key))
        case AMQP_BASIC_RETURN_METHOD:
            let returned = decoded.assumingMemoryBound(to: amqp_basic_return_t.self).pointee
            channel.content = IncomingContent(
                kind: .returned(replyCode: returned.reply_code, replyText: String(amqpBytes: returned.reply_text)),
                exchange: String(amqpBytes: returned.exchange), routingKey: String(amqpBytes: returned.routing_key))
        case AMQP_BASIC_ACK_METHOD, AMQP_BASIC_NACK_METHOD:
            guard case .publisher = channel.role else { return }
            confirm(decoded, id: method.id)
        case AMQP_CHANNEL_CLOSE_METHOD:
            channelClosedByBroker(channel, error: .translate(.serverMethod(method), phase: .running))
        case AMQP_BASIC_CANCEL_METHOD:
            consumerCancelledByBroker(channel, decoded.assumingMemoryBound(to: amqp_basic_cancel_t.self).pointee)
        default:
            if !completeRPC(on: channel, with: method) {
                logger.debug(
                    "AMQP unexpected method",
                    metadata: [LogKey.channel: "\(channel.id)", LogKey.reason: "\(method.id)"])
            }
        }
    }

    private func confirm(_ decoded: UnsafeMutableRawPointer, id: amqp_method_number_t) {
        if id == AMQP_BASIC_ACK_METHOD {
            let ack = decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
            confirm(tag: ack.delivery_tag, multiple: ack.multiple != 0, nack: false)
        } else {
            let nack = decoded.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
            confirm(tag: nack.delivery_tag, multiple: nack.multiple != 0, nack: true)
        }
    }

    /// The broker cancelled the consumer (its queue was deleted, say): end it and close its channel.
    private func consumerCancelledByBroker(_ channel: ChannelState, _ cancel: amqp_basic_cancel_t) {
        guard case .consumer(let consumer) = channel.role else { return }
        if cancel.nowait == 0, let connection {
            var cancelOK = amqp_basic_cancel_ok_t(consumer_tag: cancel.consumer_tag)
            _ = amqp_send_method(connection, channel.id, AMQP_BASIC_CANCEL_OK_METHOD, &cancelOK)
        }
        consumer.buffer.finish(.failed(AMQPError(.consumerCancelled, "the broker cancelled the consumer")))
        // Acks held back for a `multiple` ack go out before the channel closes (a closing channel sends nothing).
        sendPendingAcks(holding: false)
        closeChannel(channel)
    }

    private func handleHeader(_ frame: amqp_frame_t, on channel: ChannelState) {
        let header = frame.payload.properties
        guard channel.content != nil, let decoded = header.decoded else { return }
        let properties = decoded.assumingMemoryBound(to: amqp_basic_properties_t.self).pointee
        channel.content!.properties = AMQPProperties(properties)
        let size = Int(clamping: header.body_size)
        channel.content!.bodySize = size
        // A body over the consumer's limit is refused from its header: its frames are counted and dropped as they
        // arrive (rabbitmq-c reuses each frame's memory), so it is never held.
        if case .consumer(let consumer) = channel.role, size > consumer.maximumBodySize {
            channel.content!.discarding = true
        } else {
            channel.content!.body.reserveCapacity(size)
        }
        if size == 0 { complete(channel) }
    }

    private func handleBody(_ fragment: amqp_bytes_t, on channel: ChannelState) {
        guard channel.content != nil, channel.content!.bodySize >= 0 else { return }
        channel.content!.received += fragment.len
        if !channel.content!.discarding, let bytes = fragment.bytes, fragment.len > 0 {
            channel.content!.body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: fragment.len))
        }
        if channel.content!.received >= channel.content!.bodySize { complete(channel) }
    }

    /// Hands each consumer the deliveries of this turn.
    func flushDeliveries() {
        for consumer in consumersWithOutbox { flush(consumer) }
        consumersWithOutbox.removeAll(keepingCapacity: true)
    }

    /// Hands `consumer` its deliveries of this turn, before anything that ends its buffer.
    func flush(_ consumer: ConsumerState) {
        guard !consumer.outbox.isEmpty else { return }
        consumer.buffer.push(contentsOf: consumer.outbox)
        consumer.outbox.removeAll(keepingCapacity: true)
    }

    private func complete(_ channel: ChannelState) {
        guard let content = channel.content.take() else { return }
        switch content.kind {
        case .delivery(let deliveryTag, let redelivered):
            guard case .consumer(let consumer) = channel.role, !channel.isClosing else { return }
            if consumer.outbox.isEmpty { consumersWithOutbox.append(consumer) }
            consumer.outbox.append(
                AMQPDelivery(
                    body: content.body, bodySize: content.bodySize, deliveryTag: deliveryTag,
                    redelivered: redelivered, exchange: content.exchange, routingKey: content.routingKey,
                    properties: content.properties, channel: channel.id, generation: generation,
                    consumerID: consumer.buffer.id))
        case .returned(let replyCode, let replyText):
            returned(content, replyCode: replyCode, replyText: replyText)
        case .got(let deliveryTag, let redelivered):
            guard case .consumer(let consumer) = channel.role, let call = channel.inFlight,
                case .basicGet = call.request
            else { return }
            channel.inFlight = nil
            let delivery = AMQPDelivery(
                body: content.body, bodySize: content.bodySize, deliveryTag: deliveryTag, redelivered: redelivered,
                exchange: content.exchange, routingKey: content.routingKey, properties: content.properties,
                channel: channel.id, generation: generation, consumerID: consumer.buffer.id)
            call.completion(self, .success(.got(delivery)))
            pump(channel)
        }
    }
}
