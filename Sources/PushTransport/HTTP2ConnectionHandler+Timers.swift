import CNGHTTP2
import NIOCore

// The request deadline sweep and the idle PING.

extension HTTP2ConnectionHandler {
    /// Arms the deadline sweep if requests are pending and it is not armed.
    func scheduleTimeoutTimer() {
        guard timeoutTimer == nil, let context else { return }
        // A sweep at a tenth of the timeout (10 ms to 1 s) bounds lateness without a timer per request.
        let tick = TimeAmount.nanoseconds(min(max(requestTimeout.nanoseconds / 10, 10_000_000), 1_000_000_000))
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timeoutTimer = context.eventLoop.scheduleTask(in: tick) {
            let handler = loopBound.value
            handler.timeoutTimer = nil
            handler.expireRequests(now: .now())
        }
    }

    /// Fails every request whose deadline has passed; resets its stream if it was open.
    func expireRequests(now: NIODeadline) {
        guard case .active = state else { return }
        while let first = waiting.first, first.deadline <= now {
            waiting.removeFirst()
            first.complete(.failure(TransportError(.timeout, "no stream became available within the timeout")))
        }
        var expired: [Int32] = []
        for (id, stream) in streams where stream.deadline <= now { expired.append(id) }
        if !expired.isEmpty, let session {
            for id in expired {
                guard let stream = streams.removeValue(forKey: id) else { continue }
                forgetBody(of: stream)
                // nghttp2 may still call back about the stream until the reset is processed: it must not find it.
                nghttp2_session_set_stream_user_data(session, id, nil)
                metrics.streamsInFlight.decrement()
                nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_CANCEL.rawValue)
                stream.complete(.failure(TransportError(.timeout, "the server did not answer within the timeout")))
            }
            logger.debug("\(providerName) requests timed out", metadata: ["count": "\(expired.count)"])
            if !pingOutstanding {
                // On suspicion: a silent stream may mean a dead connection; the PING's answer (or its absence at the
                // next ping tick) tells.
                pingOutstanding = true
                sawTrafficSincePing = false
                nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
            }
            startWaitingStreams()
            flush()
        }
        if !waiting.isEmpty || !streams.isEmpty { scheduleTimeoutTimer() }
    }

    /// Checks an idle connection with a PING: after a ping interval without traffic a PING goes out, and if the next
    /// interval still brings nothing (not even the PING's ACK) the connection is considered dead and closed.
    func schedulePing() {
        guard let pingInterval, let context else { return }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        pingTimer = context.eventLoop.scheduleTask(in: pingInterval) {
            let handler = loopBound.value
            guard case .active = handler.state, let session = handler.session, let context = handler.context else {
                return
            }
            if handler.sawTrafficSincePing {
                handler.sawTrafficSincePing = false
                handler.pingOutstanding = false
            } else if handler.pingOutstanding {
                handler.fail(context: context, TransportError(.timeout, "the server did not answer a PING"))
                return
            } else {
                handler.pingOutstanding = true
                nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
                handler.flush()
            }
            handler.schedulePing()
        }
    }
}
