import CNGHTTP2
import NIOCore

// Out to the socket: one flush per event-loop cycle, and under load fewer, larger writes.

extension HTTP2ConnectionHandler {
    /// At most this many new requests wait for a write while the connection is busy.
    static let writeBatch = 64
    /// Requests in flight on the connection from which holding back is worth it whatever the server's stream limit.
    static let holdFloor = 2 * writeBatch

    /// The write cadence under load: while many streams are in flight, answers arrive a few per read and each read's
    /// new requests would go out as one small write. While at least `holdFloor` sent streams (or three quarters of
    /// the server's limit) are in flight, new requests are held back until `writeBatch` have gathered, the streams
    /// in flight fall below that mark, or 1 ms passes. Fewer, larger writes cost both ends fewer system calls and
    /// TCP segments per request, and the server stays as busy: it still has all those streams to answer. Only
    /// requests are held back: when nghttp2 has any other frame to send (SETTINGS or PING acknowledgement,
    /// WINDOW_UPDATE, RST_STREAM), everything goes at once.
    func holdsBackWrite() -> Bool {
        // The outbound queue counts frames other than DATA; bodies are counted here: no older body may wait (one
        // that flow control held back and a WINDOW_UPDATE just released).
        guard let session, unflushedRequests > 0, unflushedRequests < Self.writeBatch,
            nghttp2_session_get_outbound_queue_size(session) == unflushedRequests,
            pendingBodies == unflushedBodies
        else { return false }
        let limit = min(Int(herald_nghttp2_remote_max_concurrent_streams(session)), streamCap)
        let sent = streams.count - unflushedRequests
        guard sent >= Self.holdFloor || sent >= limit - limit / 4 else { return false }
        if holdTimer == nil, let context {
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            holdTimer = context.eventLoop.scheduleTask(in: .milliseconds(1)) {
                let handler = loopBound.value
                handler.holdTimer = nil
                handler.flush()
            }
        }
        return true
    }

    /// A stream leaves `streams`: its body, if nghttp2 had not taken it all, no longer waits.
    func forgetBody(of stream: HTTP2Stream) {
        guard stream.bodyPending else { return }
        stream.bodyPending = false
        pendingBodies -= 1
    }

    /// Schedules one drain of nghttp2's output for the end of this event-loop cycle.
    func scheduleFlush() {
        guard !flushScheduled, !inRead, let context else { return }
        flushScheduled = true
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = loopBound.value
            // Requests handed over outside a read (``acceptOnLoop(_:)``) start here, at the end of the cycle.
            handler.startWaitingStreams()
            if !handler.holdsBackWrite() { handler.flush() } else { handler.flushScheduled = false }
        }
    }

    /// Drains everything nghttp2 wants to send into one buffer and writes it with one flush.
    func flush() {
        flushScheduled = false
        guard let session, let context, case .active = state else { return }
        unflushedRequests = 0
        unflushedBodies = 0
        var buffer: ByteBuffer?
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 {
                fail(context: context, .nghttp2(count, "nghttp2 could not serialise frames"))
                return
            }
            guard count > 0, let chunk else { break }
            if buffer == nil { buffer = context.channel.allocator.buffer(capacity: max(count, 16_384)) }
            // Each chunk is one frame (or the connection preface). A request's HEADERS frame gets its block here.
            if count >= 9 && chunk[3] == UInt8(NGHTTP2_HEADERS.rawValue) {
                do {
                    try writeRequestHeaders(UnsafeBufferPointer(start: chunk, count: count), session, into: &buffer!)
                } catch {
                    fail(context: context, error)
                    return
                }
            } else {
                buffer!.writeBytes(UnsafeRawBufferPointer(start: chunk, count: count))
            }
        }
        if let buffer {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            // A failed write may have closed the channel, and with it deleted the session.
            guard self.session != nil, case .active = state else { return }
        }
        if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
            // GOAWAY exchanged and every stream done: nothing more can happen on this connection.
            context.close(promise: nil)
        } else if (shuttingDown || retiring) && streams.isEmpty {
            finishShutdown(context: context)
        }
    }
}
