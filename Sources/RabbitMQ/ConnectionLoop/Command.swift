import Synchronization

/// A request from async code to the connection thread, carried through the ``Mailbox``.
///
/// Every command that expects an answer carries its continuation; the thread resumes each exactly once,
/// with `.closed` or the connection's failure if it ends first.
enum Command: Sendable {
    case publish(PublishRequest)
    case queueOperation(RPCRequest, UnsafeContinuation<Result<RPCReply, AMQPError>, Never>)
    case startConsumer(ConsumerStart)
    /// Opens a channel for basic.get on a queue (``AMQPQueueReader``); resumes with the channel id.
    case openReader(ReaderStart)
    /// basic.get on the reader's channel: the message (unacknowledged), or nil when the queue has none ready.
    case get(DeliveryBuffer, UnsafeContinuation<Result<AMQPDelivery?, AMQPError>, Never>)
    /// Closes the reader's channel and resumes once the broker confirmed it (and so requeued what it held).
    case closeReader(DeliveryBuffer, UnsafeContinuation<Void, Never>)
    case settle(Settlement)
    case cancelConsumer(DeliveryBuffer, UnsafeContinuation<Result<Void, AMQPError>, Never>)
    /// The consumer was released: close its channel so the broker requeues what it did not settle.
    case releaseConsumer(DeliveryBuffer)
    /// Clean connection.close; `nil` when it comes from `deinit`, which cannot wait.
    case close(UnsafeContinuation<Void, Never>?)
    /// The on-connect hook finished after the reconnect that opened connection `generation`.
    case restored(generation: UInt64, Result<Void, AMQPError>)

    /// Resumes the command's continuation, if any, with `error`.
    func fail(with error: AMQPError) {
        switch self {
        case .publish(let request): request.completion.resume(returning: .failure(error))
        case .queueOperation(_, let continuation): continuation.resume(returning: .failure(error))
        case .startConsumer(let start): start.continuation.resume(returning: .failure(error))
        case .openReader(let start): start.continuation.resume(returning: .failure(error))
        case .get(_, let continuation): continuation.resume(returning: .failure(error))
        case .closeReader(_, let continuation): continuation.resume()
        case .settle, .releaseConsumer, .restored: break
        case .cancelConsumer(_, let continuation): continuation.resume(returning: .failure(error))
        case .close(let continuation): continuation?.resume()
        }
    }
}

/// One message to publish with confirms.
struct PublishRequest: Sendable {
    let body: [UInt8]
    let exchange: String
    let routingKey: String
    let properties: AMQPProperties
    let mandatory: Bool
    let completion: PublishCompletion
}

/// Who waits for a publish's confirm: its caller alone, or a batch's caller, once for all of its messages.
enum PublishCompletion: Sendable {
    case single(UnsafeContinuation<Result<Void, AMQPError>, Never>)
    case batch(PublishBatch)

    func resume(returning result: Result<Void, AMQPError>) {
        switch self {
        case .single(let continuation): continuation.resume(returning: result)
        case .batch(let batch): batch.complete(result)
        }
    }
}

/// The messages of one `publish(contentsOf:)`: its caller resumes once every one is confirmed (or failed), with
/// the first failure if any.
final class PublishBatch: Sendable {
    private let state: Mutex<(remaining: Int, failure: AMQPError?)>
    private let continuation: UnsafeContinuation<Result<Void, AMQPError>, Never>

    init(count: Int, continuation: UnsafeContinuation<Result<Void, AMQPError>, Never>) {
        state = Mutex((count, nil))
        self.continuation = continuation
    }

    func complete(_ result: Result<Void, AMQPError>) {
        let finished: Result<Void, AMQPError>? = state.withLock { state in
            if case .failure(let error) = result, state.failure == nil { state.failure = error }
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            return state.failure.map { .failure($0) } ?? .success(())
        }
        if let finished { continuation.resume(returning: finished) }
    }
}

/// What the connection thread needs to open a consumer channel.
struct ConsumerStart: Sendable {
    let queue: String
    let prefetch: UInt16
    let consumerTag: String
    /// Bodies larger than this are not kept (`AMQPDelivery.bodySize`).
    let maximumBodySize: Int
    let buffer: DeliveryBuffer
    let continuation: UnsafeContinuation<Result<ConsumerStarted, AMQPError>, Never>
}

/// What the connection thread needs to open a reader's channel.
struct ReaderStart: Sendable {
    let queue: String
    let buffer: DeliveryBuffer
    let continuation: UnsafeContinuation<Result<UInt16, AMQPError>, Never>
}

/// The broker's answer to a consumer start.
struct ConsumerStarted: Sendable {
    let channel: UInt16
    let consumerTag: String
}

/// basic.ack, basic.nack or basic.reject for one delivery (or all up to it).
struct Settlement: Sendable {
    enum Kind: Sendable {
        case ack(multiple: Bool)
        case nack(multiple: Bool, requeue: Bool)
        case reject(requeue: Bool)
    }

    let buffer: DeliveryBuffer
    let channel: UInt16
    let generation: UInt64
    let deliveryTag: UInt64
    let kind: Kind
}
