import CRabbitMQ

extension ConnectionLoop {
    /// Carries out one command from the mailbox.
    func handle(_ command: Command) {
        switch phase {
        case .finished:
            command.fail(with: mailbox.terminalError ?? .closedByClient)
            return
        case .closing:
            // connection.close is on the wire: nothing more may be sent.
            if case .close(let continuation) = command, let continuation { closeWaiters.append(continuation) }
            command.failUnlessClose(with: .closedByClient)
            return
        case .reconnecting:
            handleWhileReconnecting(command)
            return
        case .running:
            break
        }

        switch command {
        case .publish(let request):
            publish(request)
        case .queueOperation(let request, let continuation):
            enqueue(request, on: controlChannel()) { _, result in continuation.resume(returning: result) }
        case .startConsumer(let start):
            startConsumer(start)
        case .settle(let settlement):
            settle(settlement)
        case .cancelConsumer(let buffer, let continuation):
            cancelConsumer(buffer, continuation)
        case .releaseConsumer(let buffer):
            releaseConsumer(buffer)
        case .close(let continuation):
            beginClose(continuation)
        case .restored(let restoredGeneration, let result):
            restored(generation: restoredGeneration, result)
        }
    }

    private func controlChannel() -> ChannelState {
        channel(Self.controlChannelID) ?? openChannel(Self.controlChannelID, role: .control)
    }

    private func startConsumer(_ start: ConsumerStart) {
        guard let id = freeChannelID() else {
            start.continuation.resume(returning: .failure(AMQPError(.protocolError, "no free AMQP channel")))
            return
        }
        let consumer = ConsumerState(
            buffer: start.buffer, queue: start.queue, prefetch: start.prefetch, consumerTag: start.consumerTag)
        let channel = openChannel(id, role: .consumer(consumer))
        // Failures of these two also fail the consume call below, which reports them.
        enqueue(.basicQos(prefetch: start.prefetch), on: channel) { _, _ in }
        enqueue(.basicConsume(queue: start.queue, consumerTag: start.consumerTag), on: channel) { loop, result in
            switch result {
            case .success(let reply):
                if case .consumerTag(let tag) = reply { consumer.consumerTag = tag }
                consumer.isStarted = true
                start.continuation.resume(
                    returning: .success(ConsumerStarted(channel: id, consumerTag: consumer.consumerTag)))
            case .failure(let error):
                start.buffer.finish(.failed(error))
                loop.closeChannel(channel)
                start.continuation.resume(returning: .failure(error))
            }
        }
    }

    private func settle(_ settlement: Settlement) {
        // A channel that is gone took its unacknowledged deliveries with it: the broker requeues them,
        // and the consumer's buffer has already reported why. The same holds for a connection that was lost
        // since the delivery arrived (an older generation), even if a new channel now has the same id.
        guard settlement.generation == generation, let connection, let channel = channel(settlement.channel),
            !channel.isClosing,
            case .consumer(let consumer) = channel.role, consumer.buffer === settlement.buffer
        else { return }
        let status: Int32
        switch settlement.kind {
        case .ack(let multiple):
            status = amqp_basic_ack(connection, channel.id, settlement.deliveryTag, multiple ? 1 : 0)
        case .nack(let multiple, let requeue):
            status = amqp_basic_nack(
                connection, channel.id, settlement.deliveryTag, multiple ? 1 : 0, requeue ? 1 : 0)
        case .reject(let requeue):
            status = amqp_basic_reject(connection, channel.id, settlement.deliveryTag, requeue ? 1 : 0)
        }
        if status != AMQP_STATUS_OK.rawValue { fail(with: .translate(.status(status), phase: .running)) }
    }

    private func cancelConsumer(
        _ buffer: DeliveryBuffer, _ continuation: UnsafeContinuation<Result<Void, AMQPError>, Never>
    ) {
        guard let (channel, consumer) = consumerChannel(for: buffer), !channel.isClosing else {
            continuation.resume(returning: .failure(buffer.failure ?? AMQPError(.closed, "the consumer has ended")))
            return
        }
        if consumer.isCancelled {
            continuation.resume(returning: .success(()))
            return
        }
        consumer.isCancelled = true
        enqueue(.basicCancel(consumerTag: consumer.consumerTag), on: channel) { loop, result in
            // Deliveries already received stay readable and can still be acknowledged.
            if case .success = result {
                loop.flush(consumer)
                buffer.finish(.drained)
            }
            continuation.resume(returning: result.map { _ in () })
        }
    }

    private func releaseConsumer(_ buffer: DeliveryBuffer) {
        buffer.finish(.closed)
        guard let (channel, _) = consumerChannel(for: buffer) else { return }
        closeChannel(channel)
    }

    private func consumerChannel(for buffer: DeliveryBuffer) -> (ChannelState, ConsumerState)? {
        for case let channel? in channels {
            if case .consumer(let consumer) = channel.role, consumer.buffer === buffer { return (channel, consumer) }
        }
        return nil
    }
}

extension Command {
    /// Fails every command except `close`, whose waiter the caller has already recorded.
    fileprivate func failUnlessClose(with error: AMQPError) {
        if case .close = self { return }
        fail(with: error)
    }
}

extension AMQPError {
    static var closedByClient: AMQPError { AMQPError(.closed, "the connection was closed by the client") }
}
