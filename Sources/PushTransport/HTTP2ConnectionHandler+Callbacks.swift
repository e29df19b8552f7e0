import CNGHTTP2

// nghttp2 reaches the handler through these C functions. `user_data` is the handler, passed unretained: the session
// is deleted when the handler closes or is removed, so no callback outlives it.

extension HTTP2ConnectionHandler {
    /// Creates the client session with callbacks and options; SETTINGS are submitted but not yet sent.
    func makeClientSession(userData: UnsafeMutableRawPointer) -> Result<OpaquePointer, TransportError> {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            return .failure(TransportError(.protocolError, "nghttp2 could not allocate callbacks"))
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, apnsOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, apnsOnDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, apnsOnStreamClose)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, apnsOnFrameReceived)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, apnsOnFrameNotSent)

        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else {
            return .failure(TransportError(.protocolError, "nghttp2 could not allocate options"))
        }
        defer { nghttp2_option_del(option) }
        // Until the server's SETTINGS arrive assume one stream: APNs starts token connections at 1 and raises the
        // limit after the first authenticated request.
        nghttp2_option_set_peer_max_concurrent_streams(option, 1)
        // A client has no use for closed-stream state (it serves priority trees).
        nghttp2_option_set_no_closed_streams(option, 1)

        var session: OpaquePointer?
        let rv = nghttp2_session_client_new2(&session, callbacks, userData, option)
        guard rv == 0, let session else { return .failure(.nghttp2(rv, "nghttp2 could not create a session")) }

        var settings = [
            herald_nghttp2_settings_entry(Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), 0),
            herald_nghttp2_settings_entry(Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), 1 << 20),
        ]
        let submitted = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        guard submitted == 0 else {
            nghttp2_session_del(session)
            return .failure(.nghttp2(submitted, "nghttp2 could not submit SETTINGS"))
        }
        return .success(session)
    }
}

@inline(__always)
private func handler(_ userData: UnsafeMutableRawPointer?) -> HTTP2ConnectionHandler {
    Unmanaged<HTTP2ConnectionHandler>.fromOpaque(userData!).takeUnretainedValue()
}

/// The stream nghttp2 reports about (a callback, a frame it serialises): nghttp2 holds each request's `HTTP2Stream` as
/// its stream user data (unretained; the handler's `streams` keeps it alive until the stream closes), which spares a
/// dictionary lookup each time.
@inline(__always)
func stream(_ session: OpaquePointer?, _ id: Int32) -> HTTP2Stream? {
    guard let session, let pointer = nghttp2_session_get_stream_user_data(session, id) else { return nil }
    return Unmanaged<HTTP2Stream>.fromOpaque(pointer).takeUnretainedValue()
}

@inline(__always)
private func bytesEqual(_ pointer: UnsafePointer<UInt8>, _ length: Int, _ literal: StaticString) -> Bool {
    guard length == literal.utf8CodeUnitCount else { return false }
    let expected = literal.utf8Start
    for index in 0..<length where pointer[index] != expected[index] { return false }
    return true
}

/// A response header: `:status`, `apns-id`, `apns-unique-id` and `retry-after` are kept; the rest is ignored.
private let apnsOnHeader: nghttp2_on_header_callback = {
    session, frame, name, nameLength, value, valueLength, _, _ in
    guard let frame, let name, let value, herald_nghttp2_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue) else {
        return 0
    }
    // The name first: most response headers (server, date, content-type, …) are not wanted, and are skipped
    // without looking the stream up.
    enum Wanted { case status, apnsID, apnsUniqueID, retryAfter }
    let wanted: Wanted
    if bytesEqual(name, nameLength, ":status") {
        wanted = .status
    } else if bytesEqual(name, nameLength, "apns-id") {
        wanted = .apnsID
    } else if bytesEqual(name, nameLength, "apns-unique-id") {
        wanted = .apnsUniqueID
    } else if bytesEqual(name, nameLength, "retry-after") {
        wanted = .retryAfter
    } else {
        return 0
    }
    guard let stream = stream(session, herald_nghttp2_frame_stream_id(frame)) else { return 0 }
    switch wanted {
    case .status:
        // Three digits (RFC 9110); a longer value from a broken peer must not reach the arithmetic below.
        guard valueLength <= 3 else { return 0 }
        var status = 0
        for index in 0..<valueLength {
            let digit = value[index]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return 0 }
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
        }
        // Interim (1xx) responses are not the answer.
        if status >= 200 { stream.status = status }
    case .apnsID:
        stream.apnsID = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
    case .apnsUniqueID:
        stream.apnsUniqueID = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
    case .retryAfter:
        // Delta-seconds or an HTTP-date: anything longer is not one, and is not kept.
        guard valueLength <= 64 else { return 0 }
        stream.retryAfter = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
    }
    return 0
}

/// A piece of a response body (a provider's error JSON).
private let apnsOnDataChunk: nghttp2_on_data_chunk_recv_callback = {
    session, _, streamID, data, length, _ in
    guard let data, let stream = stream(session, streamID) else { return 0 }
    let room = HTTP2Stream.maximumResponseBody - stream.responseBody.count
    if room > 0 {
        stream.responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: min(room, length)))
    }
    return 0
}

private let apnsOnStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    handler(userData).streamDidClose(streamID, errorCode: errorCode)
    return 0
}

/// SETTINGS may raise the stream limit (checked after the read) and size the HPACK table; GOAWAY stops new streams.
private let apnsOnFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame else { return 0 }
    let type = herald_nghttp2_frame_type(frame)
    if type == UInt8(NGHTTP2_SETTINGS.rawValue), herald_nghttp2_frame_is_ack(frame) == 0 {
        // Every entry in order: a server may send 0 then a size to have the table emptied.
        for index in 0..<herald_nghttp2_settings_count(frame)
        where herald_nghttp2_settings_id(frame, index) == Int32(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue) {
            handler(userData).headerEncoder.serverAllowsTable(of: Int(herald_nghttp2_settings_value(frame, index)))
        }
    } else if type == UInt8(NGHTTP2_GOAWAY.rawValue) {
        let length = herald_nghttp2_goaway_opaque_data_len(frame)
        var debugData = ""
        if length > 0, let data = herald_nghttp2_goaway_opaque_data(frame) {
            debugData = String(decoding: UnsafeBufferPointer(start: data, count: min(length, 256)), as: UTF8.self)
        }
        handler(userData).didReceiveGoAway(
            lastStreamID: herald_nghttp2_goaway_last_stream_id(frame),
            errorCode: herald_nghttp2_goaway_error_code(frame),
            debugData: debugData
        )
    }
    return 0
}

private let apnsOnFrameNotSent: nghttp2_on_frame_not_send_callback = { _, frame, libraryError, userData in
    guard let frame, herald_nghttp2_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
    handler(userData).requestWasNotSent(herald_nghttp2_frame_stream_id(frame), libraryError: libraryError)
    return 0
}

/// Feeds a request's payload to nghttp2 (copied into its DATA frame buffer).
let apnsReadRequestBody: nghttp2_data_source_read_callback = {
    session, streamID, buffer, length, dataFlags, _, userData in
    guard let buffer, let dataFlags, let stream = stream(session, streamID) else {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
    let count = stream.payload.withUnsafeBytes { payload -> Int in
        let count = min(length, payload.count - stream.bodyOffset)
        if count > 0 {
            UnsafeMutableRawPointer(buffer).copyMemory(from: payload.baseAddress! + stream.bodyOffset, byteCount: count)
        }
        return count
    }
    stream.bodyOffset += count
    if stream.bodyOffset >= stream.payload.count {
        dataFlags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        handler(userData).forgetBody(of: stream)
    }
    return count
}
