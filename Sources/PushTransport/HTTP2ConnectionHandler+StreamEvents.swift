import CNGHTTP2
import Logging

// What the nghttp2 callbacks report about streams and the connection: answers, resets, refusals and GOAWAY.

extension HTTP2ConnectionHandler {
    /// A stream ended: the answer is complete, or it was reset or refused.
    func streamDidClose(_ id: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        forgetBody(of: stream)
        metrics.streamsInFlight.decrement()
        if let last = goAwayLastStreamID, id > last {
            stream.complete(.refused(TransportError(.goAway, "the server went away before processing the stream")))
        } else if errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            stream.complete(.refused(TransportError(.streamReset, "the server refused the stream")))
        } else if stream.status != 0 && errorCode == NGHTTP2_NO_ERROR.rawValue {
            stream.complete(.response(stream.response()))
        } else {
            stream.complete(
                .failure(TransportError(.streamReset, "the server reset the stream (HTTP/2 error \(errorCode))"))
            )
        }
        if !inRead { scheduleFlush() }
    }

    /// A request's HEADERS could not be sent: the request never left.
    func requestWasNotSent(_ id: Int32, libraryError: Int32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        forgetBody(of: stream)
        if let session { nghttp2_session_set_stream_user_data(session, id, nil) }
        metrics.streamsInFlight.decrement()
        stream.complete(.notSent(.nghttp2(libraryError, "the request could not be sent on this connection")))
    }

    /// The server sent GOAWAY: streams above `lastStreamID` were not processed and are retried elsewhere (nghttp2
    /// closes them as refused); the rest finish here, and no new stream starts on this connection.
    func didReceiveGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        goAwayLastStreamID = min(goAwayLastStreamID ?? .max, lastStreamID)
        metrics.goAways.increment()
        logger.debug(
            "\(providerName) connection received GOAWAY",
            metadata: ["last_stream_id": "\(lastStreamID)", "error_code": "\(errorCode)", "debug_data": "\(debugData)"]
        )
        retire(TransportError(.goAway, "the server sent GOAWAY before the request was sent"))
    }

    /// Stops taking requests: the pool replaces the connection, requests still waiting for a stream are retried
    /// elsewhere, in-flight ones finish, and the connection closes once idle.
    func retire(_ reason: TransportError) {
        guard !retiring else { return }
        retiring = true
        for request in connection.handlerDidRetire() {
            HTTP2Stream(request, deadline: .now()).complete(.notSent(reason))
        }
        let queued = waiting
        waiting.removeAll()
        for stream in queued { stream.complete(.notSent(reason)) }
        if !inRead { scheduleFlush() }
    }
}
