import CNGHTTP2
import NIOCore

// The request headers: nghttp2 serialises a HEADERS frame with an empty block, and the handler writes the frame with
// the block from its own HPACK encoder (see RequestHeaderEncoder for why).

extension HTTP2ConnectionHandler {
    private static let frameHeaderLength = 9
    private static let endHeaders: UInt8 = 0x4
    private static let padded: UInt8 = 0x8
    private static let priority: UInt8 = 0x20

    /// Writes the HEADERS frame nghttp2 serialised (`frame`, the whole frame) into `buffer` with the request's header
    /// block in place of nghttp2's.
    ///
    /// Throws when the frame is not what a request's HEADERS frame from nghttp2 is: whole, with END_HEADERS, without
    /// padding, for a stream whose request is known. The connection then fails: the server's HPACK table would no
    /// longer match ours.
    func writeRequestHeaders(
        _ frame: UnsafeBufferPointer<UInt8>,
        _ session: OpaquePointer,
        into buffer: inout ByteBuffer
    ) throws(TransportError) {
        let headerLength = Self.frameHeaderLength
        let length = Int(frame[0]) << 16 | Int(frame[1]) << 8 | Int(frame[2])
        let flags = frame[4]
        let rawID = UInt32(frame[5]) << 24 | UInt32(frame[6]) << 16 | UInt32(frame[7]) << 8 | UInt32(frame[8])
        let streamID = Int32(bitPattern: rawID & 0x7fff_ffff)
        // A stream dependency and weight come before the block when PRIORITY is set; they are kept.
        let fieldsBeforeBlock = flags & Self.priority != 0 ? 5 : 0
        guard frame.count == headerLength + length, flags & Self.endHeaders != 0, flags & Self.padded == 0,
            length >= fieldsBeforeBlock
        else {
            throw TransportError(.protocolError, "nghttp2 serialised a HEADERS frame Herald cannot re-encode")
        }
        guard let stream = stream(session, streamID) else {
            throw TransportError(
                .protocolError, "nghttp2 serialised HEADERS for stream \(streamID), which has no request")
        }

        let start = buffer.writerIndex
        buffer.writeBytes(UnsafeBufferPointer(rebasing: frame[0..<headerLength + fieldsBeforeBlock]))
        do {
            try headerEncoder.writeBlock(for: stream.request, bearerToken: stream.bearerToken, into: &buffer)
        } catch {
            throw TransportError(.protocolError, "the request's headers could not be encoded", underlying: error)
        }
        let payloadLength = buffer.writerIndex - start - headerLength
        let maximumFrame = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_FRAME_SIZE))
        guard payloadLength <= maximumFrame else {
            throw TransportError(
                .protocolError,
                "a request's header block took \(payloadLength) bytes, over the server's \(maximumFrame)-byte frames"
            )
        }
        buffer.setInteger(UInt8(truncatingIfNeeded: payloadLength >> 16), at: start)
        buffer.setInteger(UInt16(truncatingIfNeeded: payloadLength), at: start + 1)
    }
}
