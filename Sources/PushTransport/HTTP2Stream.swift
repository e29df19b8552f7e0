import NIOCore

/// What one attempt to send a request came to.
enum StreamResult: Sendable {
    /// The server answered (any status).
    case response(WireResponse)
    /// The request never left the client (queued on a connection that went away or could not open a stream): it
    /// may be sent on another connection.
    case notSent(TransportError)
    /// The request reached the server, which provably did not process it (REFUSED_STREAM, or a stream above a
    /// GOAWAY's last stream id): it may be sent again on another connection.
    case refused(TransportError)
    /// The attempt failed and must not be repeated by the transport.
    case failure(TransportError)
}

/// Who takes a request's result: the task of one `send`, or a batch (``PooledClient/sendAll(count:concurrency:request:onAnswer:)``)
/// that takes each result where it arrives, on the event loop, without waking a task per request (and without a
/// closure per request: the batch and the request's ticket travel with it).
enum ResultReceiver: Sendable {
    case task(CheckedContinuation<StreamResult, Never>)
    case batch(any BatchReceiver, BatchTicket)

    func deliver(_ result: StreamResult, for request: WireRequest) {
        switch self {
        case .task(let continuation): continuation.resume(returning: result)
        case .batch(let batch, let ticket): batch.tried(ticket, request, result)
        }
    }
}

/// A request handed to a connection, crossing from the caller's task to the event loop.
struct PendingRequest: Sendable {
    var request: WireRequest
    /// The credential for the `authorization` header (APNs' provider token, FCM's access token); nil with APNs'
    /// certificate auth.
    var bearerToken: String?
    var receiver: ResultReceiver
}

/// One request on one connection, owned by the connection handler on its event loop.
final class HTTP2Stream {
    enum State {
        /// Waiting for the server to allow another stream.
        case waiting
        /// Submitted to nghttp2 with this stream id.
        case open(Int32)
        /// Answered or failed.
        case done
    }

    var state: State = .waiting
    let request: WireRequest
    /// The body, taken from the request once: nghttp2's read callback copies from it.
    let payload: [UInt8]
    let bearerToken: String?
    let deadline: NIODeadline
    private var receiver: ResultReceiver?

    /// How many payload bytes nghttp2 has taken so far.
    var bodyOffset = 0
    /// Submitted with a body that nghttp2 has not taken in full yet (counted in the handler's `pendingBodies`).
    var bodyPending = false
    /// The response `:status`, 0 until headers arrive.
    var status = 0
    var apnsID: String?
    var apnsUniqueID: String?
    var retryAfter: String?
    /// The response body (error JSON), capped.
    var responseBody: [UInt8] = []

    /// Error bodies are small; anything longer is not a provider's JSON and is cut (``APNSOutcome`` ignores
    /// oversized ones; FCM's error bodies with their details stay well under this).
    static let maximumResponseBody = 16_385

    init(_ pending: PendingRequest, deadline: NIODeadline) {
        self.request = pending.request
        self.payload = pending.request.payload
        self.bearerToken = pending.bearerToken
        self.receiver = pending.receiver
        self.deadline = deadline
    }

    var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Resumes the caller once; later calls are ignored.
    func complete(_ result: StreamResult) {
        state = .done
        guard let receiver else { return }
        self.receiver = nil
        receiver.deliver(result, for: request)
    }

    /// What the server sent.
    func response() -> WireResponse {
        WireResponse(
            status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, retryAfter: retryAfter, body: responseBody)
    }
}
