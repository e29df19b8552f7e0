extension ConnectionLoop {
    /// Opens a channel for an ``AMQPQueueReader``: a consumer channel without basic.consume, so that its messages
    /// are settled (and, when it closes, requeued) as a consumer's are. It is not re-opened after a reconnect.
    func openReader(_ start: ReaderStart) {
        guard let id = freeChannelID() else {
            start.continuation.resume(returning: .failure(AMQPError(.protocolError, "no free AMQP channel")))
            return
        }
        let reader = ConsumerState(buffer: start.buffer, queue: start.queue, prefetch: 0, consumerTag: "")
        openChannel(id, role: .consumer(reader)) { _, result in
            switch result {
            case .success:
                start.continuation.resume(returning: .success(id))
            case .failure(let error):
                start.buffer.finish(.failed(error))
                start.continuation.resume(returning: .failure(error))
            }
        }
    }

    /// basic.get on the reader's channel.
    func get(_ buffer: DeliveryBuffer, _ continuation: UnsafeContinuation<Result<AMQPDelivery?, AMQPError>, Never>) {
        guard let (channel, reader) = consumerChannel(for: buffer), !channel.isClosing else {
            continuation.resume(returning: .failure(buffer.failure ?? Self.readerEnded))
            return
        }
        enqueue(.basicGet(queue: reader.queue), on: channel) { _, result in
            continuation.resume(
                returning: result.map { reply in
                    if case .got(let delivery) = reply { return delivery }
                    return nil
                })
        }
    }

    /// Closes the reader's channel; `continuation` resumes at close-ok, by when the broker has requeued what the
    /// reader held (or at once if the channel is already gone).
    func closeReader(_ buffer: DeliveryBuffer, _ continuation: UnsafeContinuation<Void, Never>) {
        buffer.finish(.closed)
        guard let (channel, _) = consumerChannel(for: buffer), !channel.isClosing else {
            continuation.resume()
            return
        }
        channel.isClosing = true
        enqueue(.channelClose, on: channel) { loop, _ in
            loop.forget(channel)
            continuation.resume()
        }
    }

    static var readerEnded: AMQPError { AMQPError(.closed, "the reader's channel has ended") }
}
