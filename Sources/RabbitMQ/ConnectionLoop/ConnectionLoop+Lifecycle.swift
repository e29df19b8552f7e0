import CRabbitMQ

extension ConnectionLoop {
    /// How the connection ended.
    enum Ending {
        /// close() completed (or timed out waiting for close-ok).
        case locallyClosed
        /// Broker close, socket error, missed heartbeats.
        case failed(AMQPError)
    }

    /// Starts a clean connection.close; the loop finishes when close-ok arrives or `closeTimeout` passes.
    func beginClose(_ continuation: UnsafeContinuation<Void, Never>?) {
        if let continuation { closeWaiters.append(continuation) }
        guard case .running = phase, let connection else { return }
        failParked(.closedByClient)
        var close = amqp_connection_close_t(
            reply_code: UInt16(AMQP_REPLY_SUCCESS), reply_text: pool.bytes("closed by client"), class_id: 0,
            method_id: 0)
        let status = amqp_send_method(connection, 0, AMQP_CONNECTION_CLOSE_METHOD, &close)
        guard status == AMQP_STATUS_OK.rawValue else {
            finish(.locallyClosed)
            return
        }
        phase = .closing(deadline: .now + configuration.closeTimeout)
    }

    /// The connection failed because of `error`: with a reconnect policy and while running, it is re-established;
    /// otherwise it ends and every waiter fails with `error`.
    func fail(with error: AMQPError) {
        if configuration.reconnect != nil, case .running = phase {
            connectionLost(error)
        } else {
            finish(.failed(error))
        }
    }

    /// Ends the connection: fails or finishes everything still waiting, refuses further commands, closes
    /// the socket. Runs once.
    func finish(_ ending: Ending) {
        if isFinished { return }
        phase = .finished
        let error: AMQPError
        let bufferEnding: DeliveryBuffer.Ending
        switch ending {
        case .locallyClosed:
            error = .closedByClient
            bufferEnding = .closed
            logger.debug("AMQP connection closed")
        case .failed(let failure):
            error = failure
            bufferEnding = .failed(failure)
            logger.debug("AMQP connection lost", metadata: [LogKey.error: "\(failure)"])
        }

        destroyConnection()
        status.update(.closed)
        isPublisherReady = false
        confirms.failAll(error)
        failParked(error)
        let open = channels
        channels = []
        for case let channel? in open {
            if let call = channel.inFlight {
                channel.inFlight = nil
                call.completion(self, .failure(error))
            }
            while let call = channel.queued.popFirst() { call.completion(self, .failure(error)) }
            if case .consumer(let consumer) = channel.role { consumer.buffer.finish(bufferEnding) }
        }
        for consumer in consumersToRestore { consumer.buffer.finish(bufferEnding) }
        consumersToRestore = []
        let waiting = held
        held = []
        for command in waiting { command.fail(with: error) }
        for command in mailbox.close(with: error) { command.fail(with: error) }
        for waiter in closeWaiters { waiter.resume() }
        closeWaiters = []
    }
}
