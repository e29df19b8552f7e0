import CNGHTTP2
import NIOCore

// Graceful shutdown: no new streams, in-flight ones finish, then GOAWAY and close.

extension HTTP2ConnectionHandler {
    /// Fails requests still waiting for a stream, lets in-flight ones finish, then sends GOAWAY and closes.
    func beginShutdown() {
        guard !shuttingDown else { return }
        shuttingDown = true
        connection.handlerStopsTakingRequests()
        closeReason = closeReason ?? TransportError(.shutDown, "the client was shut down")
        let reason = closeReason!
        let queued = waiting
        waiting.removeAll()
        for stream in queued { stream.complete(.failure(reason)) }
        for request in connection.takeInbox() {
            HTTP2Stream(request, deadline: .now()).complete(.failure(reason))
        }
        switch state {
        case .handshaking:
            if let context { fail(context: context, reason) }
        case .active:
            flush()
        case .closed:
            break
        }
    }

    func finishShutdown(context: ChannelHandlerContext) {
        guard let session else { return }
        nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
        // Flush once more for the GOAWAY, then close.
        shuttingDown = false
        retiring = false
        flush()
        context.close(promise: nil)
    }
}
