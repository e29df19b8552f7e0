import CRabbitMQ

extension ConnectionLoop {
    /// Carries out one command from the mailbox.
    func handle(_ command: Command) {
        // Acks wait for the end of the turn, so that a run of them becomes one frame; anything else that could
        // end a channel or depend on the order (a cancel, a release, a close) sees them sent first.
        if !channelsWithPendingAcks.isEmpty {
            if case .settle = command {} else { sendPendingAcks(holding: false) }
        }
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
        case .openReader(let start):
            openReader(start)
        case .get(let buffer, let continuation):
            get(buffer, continuation)
        case .closeReader(let buffer, let continuation):
            closeReader(buffer, continuation)
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
            buffer: start.buffer, queue: start.queue, prefetch: start.prefetch, consumerTag: start.consumerTag,
            maximumBodySize: start.maximumBodySize)
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
        if case .ack(multiple: false) = settlement.kind {
            if consumer.unsettled.ackLater(settlement.deliveryTag) { channelsWithPendingAcks.append(channel) }
            return
        }
        // The acks taken before it go first: a `multiple` settlement would cover them, and they would then
        // reach the broker as acks of tags it no longer holds.
        if !consumer.unsettled.pendingAcks.isEmpty || consumer.unsettled.isHolding {
            sendPendingAcks(holding: false)
            guard self.connection != nil, case .running = phase else { return }
        }
        let status: Int32
        let multiple: Bool
        switch settlement.kind {
        case .ack(let isMultiple):
            multiple = isMultiple
            status = amqp_basic_ack(connection, channel.id, settlement.deliveryTag, multiple ? 1 : 0)
        case .nack(let isMultiple, let requeue):
            multiple = isMultiple
            status = amqp_basic_nack(
                connection, channel.id, settlement.deliveryTag, multiple ? 1 : 0, requeue ? 1 : 0)
        case .reject(let requeue):
            multiple = false
            status = amqp_basic_reject(connection, channel.id, settlement.deliveryTag, requeue ? 1 : 0)
        }
        guard status == AMQP_STATUS_OK.rawValue else {
            fail(with: .translate(.status(status), phase: .running))
            return
        }
        consumer.unsettled.settledNow(settlement.deliveryTag, multiple: multiple)
    }

    /// Sends the plain acks of this turn: per channel one `multiple` ack for the run of deliveries they settle
    /// from the front, and single acks for those behind a delivery still open. With `holding`, those single acks
    /// wait up to `ackHoldLimit` for the deliveries in front of them (groups of jobs finishing out of order), so
    /// that they go out as part of a `multiple` ack instead: one frame instead of one per delivery.
    func sendPendingAcks(holding: Bool = true) {
        guard !channelsWithPendingAcks.isEmpty else { return }
        let pending = channelsWithPendingAcks
        channelsWithPendingAcks = []
        let now = ContinuousClock.now
        for channel in pending {
            guard case .consumer(let consumer) = channel.role else { continue }
            let overdue = consumer.unsettled.heldSince.map { now - $0 >= Self.ackHoldLimit } ?? false
            let (upTo, singles) = consumer.unsettled.takeAcks(holding: holding && !overdue, now: now)
            // Once: the list can name a channel twice (held from an earlier turn, and new acks this turn), and a
            // channel that keeps holding must not gain an entry every turn.
            if consumer.unsettled.isHolding && !channelsWithPendingAcks.contains(where: { $0 === channel }) {
                channelsWithPendingAcks.append(channel)
            }
            // A channel that is closing or gone took its deliveries with it (the broker requeues them).
            guard let connection, case .running = phase, self.channel(channel.id) === channel, !channel.isClosing
            else { continue }
            var status = AMQP_STATUS_OK.rawValue
            if let upTo { status = amqp_basic_ack(connection, channel.id, upTo, 1) }
            for tag in singles where status == AMQP_STATUS_OK.rawValue {
                status = amqp_basic_ack(connection, channel.id, tag, 0)
            }
            if status != AMQP_STATUS_OK.rawValue {
                fail(with: .translate(.status(status), phase: .running))
            }
        }
    }

    /// The longest a settled delivery's ack is held back waiting to join a `multiple` ack.
    static let ackHoldLimit: Duration = .milliseconds(100)

    /// How long the connection thread may sleep before held acks are due.
    func heldAcksDue(now: ContinuousClock.Instant) -> Duration? {
        var due: Duration?
        for channel in channelsWithPendingAcks {
            guard case .consumer(let consumer) = channel.role, let since = consumer.unsettled.heldSince else {
                continue
            }
            let left = max(.zero, since + Self.ackHoldLimit - now)
            due = min(due ?? left, left)
        }
        return due
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

    func consumerChannel(for buffer: DeliveryBuffer) -> (ChannelState, ConsumerState)? {
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
