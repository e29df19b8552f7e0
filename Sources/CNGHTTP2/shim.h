#ifndef HERALD_CNGHTTP2_SHIM_H
#define HERALD_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>

/* Accessors for nghttp2_frame, a C union: Swift reads these fields through small helpers instead of union members. */

static inline uint8_t herald_nghttp2_frame_type(const nghttp2_frame *frame) { return frame->hd.type; }

static inline uint8_t herald_nghttp2_frame_flags(const nghttp2_frame *frame) { return frame->hd.flags; }

static inline int32_t herald_nghttp2_frame_stream_id(const nghttp2_frame *frame) { return frame->hd.stream_id; }

static inline int herald_nghttp2_headers_category(const nghttp2_frame *frame) { return (int)frame->headers.cat; }

static inline int32_t herald_nghttp2_goaway_last_stream_id(const nghttp2_frame *frame) {
    return frame->goaway.last_stream_id;
}

static inline uint32_t herald_nghttp2_goaway_error_code(const nghttp2_frame *frame) {
    return frame->goaway.error_code;
}

static inline const uint8_t *herald_nghttp2_goaway_opaque_data(const nghttp2_frame *frame) {
    return frame->goaway.opaque_data;
}

static inline size_t herald_nghttp2_goaway_opaque_data_len(const nghttp2_frame *frame) {
    return frame->goaway.opaque_data_len;
}

static inline int herald_nghttp2_frame_is_ack(const nghttp2_frame *frame) {
    return (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0;
}

/* A SETTINGS frame's entries, in the order the peer sent them (the same setting may come more than once). */
static inline size_t herald_nghttp2_settings_count(const nghttp2_frame *frame) { return frame->settings.niv; }

static inline int32_t herald_nghttp2_settings_id(const nghttp2_frame *frame, size_t index) {
    return frame->settings.iv[index].settings_id;
}

static inline uint32_t herald_nghttp2_settings_value(const nghttp2_frame *frame, size_t index) {
    return frame->settings.iv[index].value;
}

/* nghttp2_settings_entry built in C (its field types differ between headers). */
static inline nghttp2_settings_entry herald_nghttp2_settings_entry(int32_t id, uint32_t value) {
    nghttp2_settings_entry entry;
    entry.settings_id = id;
    entry.value = value;
    return entry;
}

/* The remote MAX_CONCURRENT_STREAMS (the server's limit for streams we open). */
static inline uint32_t herald_nghttp2_remote_max_concurrent_streams(nghttp2_session *session) {
    return nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

#endif
