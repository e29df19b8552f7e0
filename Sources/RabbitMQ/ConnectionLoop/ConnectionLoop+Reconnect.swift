import CRabbitMQ
import Glibc

extension ConnectionLoop {
    /// The connection failed under us and ``AMQPConfiguration/reconnect`` is set: fail what can only have
    /// belonged to the lost connection, keep everything else for the next one, and schedule the first attempt.
    func connectionLost(_ cause: AMQPError) {
        let attempt = reconnectAttempts + 1
        let delay = backoff(beforeAttempt: attempt)
        phase = .reconnecting(due: .now + delay)
        status.update(.reconnecting)
        logger.info(
            "AMQP connection lost, reconnecting",
            metadata: [LogKey.error: "\(cause)", LogKey.attempt: "\(attempt)", LogKey.delay: "\(delay)"])
        destroyConnection()
        isPublisherReady = false
        isBlocked = false

        // Sent but not confirmed: the broker may or may not have it, so the caller hears of it.
        var unconfirmed = cause
        unconfirmed.message = "the connection was lost before the broker confirmed the message: " + cause.message
        confirms.failAll(unconfirmed)
        for consumer in consumersWithOutbox { consumer.outbox.removeAll() }
        consumersWithOutbox.removeAll()
        // Acks not yet sent die with the connection: the broker requeues those deliveries.
        channelsWithPendingAcks.removeAll()

        let open = channels
        channels = []
        for case let channel? in open {
            if case .consumer(let consumer) = channel.role, consumer.isStarted, !consumer.isCancelled,
                !channel.isClosing
            {
                // Its unsettled deliveries are requeued by the broker; the undelivered rest would be too.
                consumer.buffer.discardBuffered()
                consumersToRestore.append(consumer)
            }
            if let call = channel.inFlight {
                channel.inFlight = nil
                call.completion(self, .failure(cause))
            }
            while let call = channel.queued.popFirst() { call.completion(self, .failure(cause)) }
        }
    }

    /// The wait before reconnect attempt `attempt`, from the policy with its random jitter.
    func backoff(beforeAttempt attempt: Int) -> Duration {
        guard let policy = configuration.reconnect else { return .zero }
        return policy.delay(beforeAttempt: attempt, random: policy.random())
    }

    /// Waits out the backoff (handling commands meanwhile), then tries to open a new connection.
    func waitAndReconnect(due: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        if now < due {
            waitForMailbox(milliseconds: Int32(clamping: max(1, (due - now).milliseconds)))
            return
        }
        reconnectAttempts += 1
        switch open() {
        case .success:
            phase = .running
            generation += 1
            connectionOpened()
            logger.info("AMQP connection re-established", metadata: [LogKey.attempt: "\(reconnectAttempts)"])
            let waiting = held
            held = []
            for command in waiting { handle(command) }
            if !parked.isEmpty { ensurePublisherChannel() }
            reconnected(generation)
        case .failure(let error):
            if let limit = configuration.reconnect?.maximumAttempts, reconnectAttempts >= limit {
                finish(.failed(error))
                return
            }
            let delay = backoff(beforeAttempt: reconnectAttempts + 1)
            logger.debug(
                "AMQP reconnect attempt failed",
                metadata: [
                    LogKey.error: "\(error)", LogKey.attempt: "\(reconnectAttempts)", LogKey.delay: "\(delay)",
                ])
            phase = .reconnecting(due: .now + delay)
        }
    }

    /// A command that arrived while there is no connection: kept for the next one, or answered now.
    func handleWhileReconnecting(_ command: Command) {
        switch command {
        case .publish(let request):
            parked.append(request)
        case .queueOperation, .startConsumer, .openReader:
            held.append(command)
        case .get(let buffer, let continuation):
            // The reader's channel, and what it had taken, went with the lost connection.
            continuation.resume(returning: .failure(buffer.failure ?? Self.readerEnded))
        case .closeReader(let buffer, let continuation):
            buffer.finish(.closed)
            continuation.resume()
        case .settle, .restored:
            return  // a delivery of the lost connection, which the broker requeued; a stale hook result
        case .cancelConsumer(let buffer, let continuation):
            if let consumer = removeConsumerToRestore(buffer) {
                consumer.isCancelled = true
                buffer.finish(.drained)
                continuation.resume(returning: .success(()))
            } else {
                continuation.resume(returning: .failure(buffer.failure ?? AMQPError(.closed, "the consumer has ended")))
            }
        case .releaseConsumer(let buffer):
            buffer.finish(.closed)
            _ = removeConsumerToRestore(buffer)
        case .close(let continuation):
            if let continuation { closeWaiters.append(continuation) }
            finish(.locallyClosed)
        }
    }

    private func removeConsumerToRestore(_ buffer: DeliveryBuffer) -> ConsumerState? {
        guard let index = consumersToRestore.firstIndex(where: { $0.buffer === buffer }) else { return nil }
        return consumersToRestore.remove(at: index)
    }

    /// The on-connect hook finished: re-open the consumers, or treat a failed hook as a lost connection.
    func restored(generation restoredGeneration: UInt64, _ result: Result<Void, AMQPError>) {
        guard restoredGeneration == generation, case .running = phase else { return }
        if case .failure(let error) = result {
            logger.info("AMQP on-connect hook failed after reconnecting", metadata: [LogKey.error: "\(error)"])
            connectionLost(error)
            return
        }
        reconnectAttempts = 0
        let consumers = consumersToRestore
        consumersToRestore = []
        for consumer in consumers { restart(consumer) }
    }

    /// Opens `consumer` again on a new channel with its queue, prefetch and requested tag.
    private func restart(_ consumer: ConsumerState) {
        guard let id = freeChannelID() else {
            consumer.buffer.finish(.failed(AMQPError(.protocolError, "no free AMQP channel")))
            return
        }
        // The new channel's delivery tags start at 1 again.
        consumer.unsettled.reset()
        let channel = openChannel(id, role: .consumer(consumer))
        enqueue(.basicQos(prefetch: consumer.prefetch), on: channel) { _, _ in }
        enqueue(.basicConsume(queue: consumer.queue, consumerTag: consumer.requestedTag), on: channel) {
            loop, result in
            switch result {
            case .success(let reply):
                if case .consumerTag(let tag) = reply { consumer.consumerTag = tag }
                loop.logger.debug("AMQP consumer resumed", metadata: [LogKey.queue: "\(consumer.queue)"])
            case .failure(let error):
                // Lost again: `connectionLost` has queued it for the next connection already.
                guard case .running = loop.phase else { return }
                consumer.buffer.finish(.failed(error))
                loop.closeChannel(channel)
            }
        }
    }

    func destroyConnection() {
        if let connection {
            amqp_destroy_connection(connection)
            self.connection = nil
        }
        if !pollDescriptors.isEmpty { pollDescriptors[0].fd = -1 }
    }
}
