import CRabbitMQ

extension ConnectionLoop {
    func channel(_ id: UInt16) -> ChannelState? {
        Int(id) < channels.count ? channels[Int(id)] : nil
    }

    /// Registers a channel and queues channel.open as its first RPC (`opened` has its answer).
    @discardableResult
    func openChannel(
        _ id: UInt16, role: ChannelState.Role,
        opened: @escaping (ConnectionLoop, Result<RPCReply, AMQPError>) -> Void = { _, _ in }
    ) -> ChannelState {
        let channel = ChannelState(id: id, role: role)
        if channels.count <= Int(id) {
            channels.append(contentsOf: repeatElement(nil, count: Int(id) + 1 - channels.count))
        }
        channels[Int(id)] = channel
        enqueue(.channelOpen, on: channel, completion: opened)
        return channel
    }

    /// The lowest channel id above the fixed control and publisher channels that is not in use.
    func freeChannelID() -> UInt16? {
        let first = Int(Self.publisherChannelID) + 1
        let last = max(first, channelMax)
        for id in first...last where channel(UInt16(id)) == nil { return UInt16(id) }
        return nil
    }

    /// Queues `request` on `channel`; it is sent once every earlier RPC on the channel has been answered.
    func enqueue(
        _ request: RPCRequest,
        on channel: ChannelState,
        completion: @escaping (ConnectionLoop, Result<RPCReply, AMQPError>) -> Void
    ) {
        channel.queued.append(RPCCall(request: request, completion: completion))
        pump(channel)
    }

    /// Sends the next queued RPC if none is awaiting its reply.
    func pump(_ channel: ChannelState) {
        guard let connection, !isFinished, channel.inFlight == nil, let call = channel.queued.popFirst() else { return }
        channel.inFlight = call
        let status = call.request.send(on: channel.id, connection: connection, pool: pool)
        if status != AMQP_STATUS_OK.rawValue { fail(with: .translate(.status(status), phase: .running)) }
    }

    /// Completes the in-flight RPC if `method` is its reply; returns false otherwise.
    func completeRPC(on channel: ChannelState, with method: amqp_method_t) -> Bool {
        guard let call = channel.inFlight, call.request.isAnswered(by: method.id) else { return false }
        channel.inFlight = nil
        call.completion(self, .success(RPCReply(method)))
        pump(channel)
        return true
    }

    /// Client-initiated channel.close; the channel is forgotten when close-ok arrives.
    func closeChannel(_ channel: ChannelState) {
        guard self.channel(channel.id) === channel, !channel.isClosing else { return }
        channel.isClosing = true
        enqueue(.channelClose, on: channel) { loop, _ in loop.forget(channel) }
    }

    func forget(_ channel: ChannelState) {
        if self.channel(channel.id) === channel { channels[Int(channel.id)] = nil }
    }

    /// The broker sent channel.close: acknowledge it, fail what was waiting on the channel, and reopen the
    /// control and publisher channels if work is still queued for them.
    func channelClosedByBroker(_ channel: ChannelState, error: AMQPError) {
        guard let connection else { return }
        var closeOK = amqp_channel_close_ok_t(dummy: 0)
        let status = amqp_send_method(connection, channel.id, AMQP_CHANNEL_CLOSE_OK_METHOD, &closeOK)
        forget(channel)
        logger.debug(
            "AMQP channel closed by the broker",
            metadata: [LogKey.channel: "\(channel.id)", LogKey.error: "\(error)"])

        let failed = channel.inFlight
        channel.inFlight = nil
        failed?.completion(self, .failure(error))
        var survivors: [RPCCall] = []
        while let call = channel.queued.popFirst() { survivors.append(call) }

        switch channel.role {
        case .control:
            // The failed request is the one the broker refused (a passive declare of a missing queue, say);
            // the ones behind it get a fresh channel, unless opening the channel itself failed.
            if case .channelOpen = failed?.request {
                for call in survivors { call.completion(self, .failure(error)) }
            } else if !survivors.isEmpty {
                let reopened = openChannel(channel.id, role: .control)
                for call in survivors { reopened.queued.append(call) }
            }
        case .publisher:
            isPublisherReady = false
            confirms.failAll(error)
            for call in survivors { call.completion(self, .failure(error)) }
            if !parked.isEmpty && !isFinished { ensurePublisherChannel() }
        case .consumer(let consumer):
            for call in survivors { call.completion(self, .failure(error)) }
            consumer.buffer.finish(.failed(error))
        }
        if status != AMQP_STATUS_OK.rawValue { fail(with: .translate(.status(status), phase: .running)) }
    }
}
