import APNSCore
import NIOCore

/// What one attempt to send a request came to.
enum APNSStreamResult: Sendable {
    /// APNs answered (any status).
    case response(APNSOutcome)
    /// The request never left the client (queued on a connection that went away or could not open a stream): it
    /// may be sent on another connection.
    case notSent(APNSTransportError)
    /// The request reached the server, which provably did not process it (REFUSED_STREAM, or a stream above a
    /// GOAWAY's last stream id): it may be sent again on another connection.
    case refused(APNSTransportError)
    /// The attempt failed and must not be repeated by the transport.
    case failure(APNSTransportError)
}

/// Who takes a request's result: the task of one `send`, or a batch (``APNSClient/sendAll(count:concurrency:request:onAnswer:)``)
/// that takes each result where it arrives, on the event loop, without waking a task per request (and without a
/// closure per request: the batch and the request's ticket travel with it).
enum APNSResultReceiver: Sendable {
    case task(CheckedContinuation<APNSStreamResult, Never>)
    case batch(BatchSend, BatchSend.Ticket)

    func deliver(_ result: APNSStreamResult, for request: APNSRequest) {
        switch self {
        case .task(let continuation): continuation.resume(returning: result)
        case .batch(let batch, let ticket): batch.tried(ticket, request, result)
        }
    }
}

/// A request handed to a connection, crossing from the caller's task to the event loop.
struct APNSPendingRequest: Sendable {
    var request: APNSRequest
    /// The provider token (JWT) for the `authorization` header; nil with certificate auth.
    var bearerToken: String?
    var receiver: APNSResultReceiver
}

/// One request on one connection, owned by the connection handler on its event loop.
final class APNSStream {
    enum State {
        /// Waiting for the server to allow another stream.
        case waiting
        /// Submitted to nghttp2 with this stream id.
        case open(Int32)
        /// Answered or failed.
        case done
    }

    var state: State = .waiting
    let request: APNSRequest
    let bearerToken: String?
    let deadline: NIODeadline
    private var receiver: APNSResultReceiver?

    /// How many payload bytes nghttp2 has taken so far.
    var bodyOffset = 0
    /// Submitted with a body that nghttp2 has not taken in full yet (counted in the handler's `pendingBodies`).
    var bodyPending = false
    /// The response `:status`, 0 until headers arrive.
    var status = 0
    var apnsID: String?
    var apnsUniqueID: String?
    /// The response body (error JSON), capped.
    var responseBody: [UInt8] = []

    /// Error bodies are tiny; anything longer is not APNs' JSON and is cut (``APNSOutcome`` ignores oversized ones).
    static let maximumResponseBody = 8193

    init(_ pending: APNSPendingRequest, deadline: NIODeadline) {
        self.request = pending.request
        self.bearerToken = pending.bearerToken
        self.receiver = pending.receiver
        self.deadline = deadline
    }

    var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Resumes the caller once; later calls are ignored.
    func complete(_ result: APNSStreamResult) {
        state = .done
        guard let receiver else { return }
        self.receiver = nil
        receiver.deliver(result, for: request)
    }

    /// The outcome built from what the server sent.
    func outcome() -> APNSOutcome {
        APNSOutcome(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, body: responseBody)
    }
}
