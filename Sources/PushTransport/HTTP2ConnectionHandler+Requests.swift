import CNGHTTP2
import NIOCore

// Requests into streams: what the connection hands over, waiting in deadline order for the server's stream limit.

extension HTTP2ConnectionHandler {
    /// True while the handler opens new streams: the connection is up, and neither shutting down nor retiring.
    var takesRequests: Bool {
        guard case .active = state else { return false }
        return !shuttingDown && !retiring
    }

    /// Takes requests handed over by the connection: they wait for a stream in deadline order.
    func accept(_ pending: [PendingRequest]) {
        guard !pending.isEmpty else { return }
        guard takesRequests else {
            let reason = closeReason ?? TransportError(.connectionClosed, "the connection is closing")
            for request in pending { HTTP2Stream(request, deadline: .now()).complete(resultForUnsent(reason)) }
            return
        }
        let deadline = NIODeadline.now() + requestTimeout
        for request in pending { waiting.append(HTTP2Stream(request, deadline: deadline)) }
        startWaitingStreams()
        scheduleTimeoutTimer()
    }

    /// Takes one request handed over on the event loop (see ``HTTP2Connection/enqueue(_:)``). Returns false, taking
    /// nothing, when the handler starts no new streams: the connection's inbox then answers the request.
    func acceptOnLoop(_ request: PendingRequest) -> Bool {
        guard takesRequests else { return false }
        waiting.append(HTTP2Stream(request, deadline: .now() + requestTimeout))
        scheduleTimeoutTimer()
        // Within a read, `channelReadComplete` starts the streams and flushes once for all of them; otherwise the
        // flush scheduled for the end of this cycle does.
        scheduleFlush()
        return true
    }

    /// Called through `eventLoop.execute` when the connection's inbox has requests.
    func drainInbox() {
        accept(connection.takeInbox())
        flush()
    }

    /// Opens streams for waiting requests while the server's SETTINGS_MAX_CONCURRENT_STREAMS allows.
    func startWaitingStreams() {
        guard takesRequests, let session, !waiting.isEmpty else { return }
        let limit = min(Int(herald_nghttp2_remote_max_concurrent_streams(session)), streamCap)
        while streams.count < limit, let stream = waiting.popFirst() {
            let headerBytes = headerEncoder.headerBytes(of: stream.request, bearerToken: stream.bearerToken)
            guard headerBytes <= RequestHeaderEncoder.maximumHeaderBytes else {
                let limit = RequestHeaderEncoder.maximumHeaderBytes
                let message =
                    "the request's headers may take \(headerBytes) bytes, over the \(limit) one HEADERS frame holds"
                stream.complete(.failure(TransportError(.protocolError, message)))
                continue
            }
            // No headers: the flush writes the HEADERS frame with the block from `headerEncoder`. The stream is the
            // stream's user data, unretained: `streams` holds it while it is open.
            let id = withUnsafePointer(to: dataProvider) { provider in
                nghttp2_submit_request(
                    session, nil, nil, 0, stream.payload.isEmpty ? nil : provider,
                    Unmanaged.passUnretained(stream).toOpaque())
            }
            guard id > 0 else {
                if id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue {
                    // 2^31 streams used up: this request and the rest go to a fresh connection.
                    stream.complete(.notSent(.nghttp2(id, "the connection ran out of stream ids")))
                    retire(.nghttp2(id, "the connection ran out of stream ids"))
                    return
                }
                stream.complete(.failure(.nghttp2(id, "nghttp2 refused the request")))
                continue
            }
            stream.state = .open(id)
            streams[id] = stream
            unflushedRequests += 1
            if !stream.payload.isEmpty {
                stream.bodyPending = true
                pendingBodies += 1
                unflushedBodies += 1
            }
            metrics.streamsInFlight.increment()
        }
    }
}
