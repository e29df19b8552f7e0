#ifndef HERALD_CRABBITMQ_SHIM_H
#define HERALD_CRABBITMQ_SHIM_H
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <amqp_ssl_socket.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/// `amqp_login_with_properties` is variadic (the SASL arguments), which Swift cannot call: this fixes the
/// mechanism to PLAIN and passes user and password through.
static inline amqp_rpc_reply_t herald_amqp_login_plain(amqp_connection_state_t state, char const *vhost,
                                                       int channel_max, int frame_max, int heartbeat,
                                                       amqp_table_t const *client_properties,
                                                       char const *user, char const *password) {
    return amqp_login_with_properties(state, vhost, channel_max, frame_max, heartbeat, client_properties,
                                      AMQP_SASL_METHOD_PLAIN, user, password);
}

/// A non-blocking, close-on-exec eventfd: the connection thread's wake-up signal (`poll()`s with the socket).
static inline int herald_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/// Names the calling thread (Linux keeps 15 bytes), for `top -H`, gdb and perf.
static inline void herald_set_thread_name(char const *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#endif
