import CRabbitMQ
import Glibc

extension ConnectionLoop {
    /// Sends `request` now if the publisher channel can take it, otherwise parks it (order is kept).
    func publish(_ request: PublishRequest) {
        if parked.isEmpty && canSend {
            send(request)
        } else {
            parked.append(request)
            ensurePublisherChannel()
        }
    }

    private var canSend: Bool {
        isPublisherReady && !isBlocked && confirms.outstanding < configuration.maxUnconfirmedPublishes
    }

    /// Sends parked publishes while the channel is ready, the broker is not blocking and the window has room.
    func drainParked() {
        guard canSend, !parked.isEmpty else { return }
        corked(parked.count > 1) {
            while canSend, !isFinished, let request = parked.popFirst() {
                send(request)
            }
        }
    }

    /// Runs `body` with the socket corked (TCP_CORK) if `burst`: the frames it writes leave in full segments when
    /// it ends, not one segment per `send()`. rabbitmq-c writes every publish as soon as it is made, and one
    /// segment per message cost a publisher most of its CPU in the kernel (and the broker a read per message).
    func corked(_ burst: Bool, _ body: () -> Void) {
        let descriptor = burst ? connection.map { amqp_get_sockfd($0) } ?? -1 : -1
        guard descriptor >= 0 else { return body() }
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        body()
        // The connection may have been lost (and its socket closed) inside `body`: uncork only the same socket.
        guard let connection, amqp_get_sockfd(connection) == descriptor else { return }
        var off: Int32 = 0
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Fails every parked publish, for example when the publisher channel cannot be opened.
    func failParked(_ error: AMQPError) {
        while let request = parked.popFirst() {
            request.completion.resume(returning: .failure(error))
        }
    }

    /// Opens the publisher channel and puts it in confirm mode, unless that is done or under way.
    func ensurePublisherChannel() {
        guard channel(Self.publisherChannelID) == nil else { return }
        let channel = openChannel(Self.publisherChannelID, role: .publisher)
        enqueue(.confirmSelect, on: channel) { loop, result in
            switch result {
            case .success:
                loop.confirms.reset()
                loop.isPublisherReady = true
                loop.drainParked()
            case .failure(let error):
                // A lost connection keeps the parked publishes (never sent) for the next one.
                if case .running = loop.phase { loop.failParked(error) }
            }
        }
    }

    /// Writes basic.publish with its header and body frames, and records the publish for its confirm.
    private func send(_ request: PublishRequest) {
        guard let connection else { return }
        var properties = request.properties.encoded(in: pool)
        let exchange = pool.bytes(request.exchange)
        let routingKey = pool.bytes(request.routingKey)
        let status = request.body.withUnsafeBytes { body in
            amqp_basic_publish(
                connection, Self.publisherChannelID, exchange, routingKey, request.mandatory ? 1 : 0, 0,
                &properties, amqp_bytes_t(len: body.count, bytes: UnsafeMutableRawPointer(mutating: body.baseAddress)))
        }
        guard status == AMQP_STATUS_OK.rawValue else {
            // A failed publish may have left a partial frame sequence on the wire, so the connection
            // cannot be trusted any more, whatever the status says.
            let error = AMQPError.translate(.status(status), phase: .running)
            request.completion.resume(returning: .failure(error))
            fail(with: error)
            return
        }
        let returnKey =
            request.mandatory
            ? ConfirmWindow.ReturnKey(exchange: request.exchange, routingKey: request.routingKey, body: request.body)
            : nil
        confirms.append(request.completion, returnKey: returnKey)
    }

    /// basic.ack or basic.nack from the broker on the publisher channel.
    func confirm(tag: UInt64, multiple: Bool, nack: Bool) {
        let error = nack ? AMQPError(.publishNacked, "the broker rejected the message (basic.nack)") : nil
        if !confirms.confirm(tag: tag, multiple: multiple, nack: error) {
            logger.debug("AMQP confirm for an unknown delivery tag", metadata: [LogKey.reason: "\(tag)"])
        }
        drainParked()
    }

    /// A mandatory message that could not be routed; its confirm follows and then fails.
    func returned(_ content: IncomingContent, replyCode: UInt16, replyText: String) {
        let error = AMQPError(
            .messageReturned,
            "unroutable message returned for exchange '\(content.exchange)', routing key '\(content.routingKey)': \(replyText)",
            replyCode: replyCode)
        if !confirms.markReturned(
            exchange: content.exchange, routingKey: content.routingKey, body: content.body, error: error)
        {
            logger.debug(
                "AMQP return matched no outstanding mandatory publish", metadata: [LogKey.replyCode: "\(replyCode)"])
        }
    }
}
