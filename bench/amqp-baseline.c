/*
 * The C baseline for `herald bench amqp`: the same work with plain rabbitmq-c, as the broker's own limit on this
 * machine. Publishes COUNT persistent messages of SIZE bytes with publisher confirms (at most WINDOW unconfirmed),
 * then consumes and acks them (basic.qos PREFETCH; one ack with multiple=true every ACK_EVERY deliveries), then
 * does both at once (publisher on a thread of its own, on its own connection); prints msgs/s for each phase and
 * the CPU (user + system) it spent per message in each. The defaults are the best consumer rabbitmq-c makes easy
 * (prefetch 1000, a multiple ack every 500, issue 35); --prefetch 200 --ack-every 1 is the naive one.
 * --max-priority P declares the queue with x-max-priority P and publishes every message at priority P, as Herald's
 * classic work queues (x-max-priority 3) and its job messages are: what RabbitMQ's priority queue costs.
 *
 * Build: make bench.   Run: bench/amqp-baseline --amqp-url URL --count N --size 300 [--queue-type classic|quorum]
 *                      [--prefetch P] [--ack-every A] [--confirm-window W] [--max-priority P] [--json]
 */
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct options {
    char *url;
    long count;
    long size;
    const char *queue_type;
    int prefetch;
    long ack_every;
    long window;
    int max_priority;
    int json;
};

/* User plus system CPU of this process, in seconds (every thread). */
static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
           + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "amqp-baseline: %s: %s\n", what, detail);
    exit(1);
}

static void check_reply(amqp_rpc_reply_t reply, const char *what) {
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) return;
    if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION) die(what, amqp_error_string2(reply.library_error));
    die(what, "broker exception");
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static amqp_connection_state_t open_connection(const char *url) {
    struct amqp_connection_info info;
    char *copy = strdup(url);
    if (amqp_parse_url(copy, &info) != AMQP_STATUS_OK) die("parse url", "invalid AMQP URL");
    amqp_connection_state_t conn = amqp_new_connection();
    amqp_socket_t *socket = amqp_tcp_socket_new(conn);
    if (!socket) die("socket", "amqp_tcp_socket_new failed");
    int status = amqp_socket_open(socket, info.host, info.port);
    if (status != AMQP_STATUS_OK) die("connect", amqp_error_string2(status));
    check_reply(amqp_login(conn, info.vhost, 0, 131072, 30, AMQP_SASL_METHOD_PLAIN, info.user, info.password),
                "login");
    free(copy);
    return conn;
}

static void open_channel(amqp_connection_state_t conn, amqp_channel_t channel) {
    amqp_channel_open(conn, channel);
    check_reply(amqp_get_rpc_reply(conn), "channel.open");
}

/* A publisher connection with its confirm-mode channel 1; delivery tags count on across phases. */
struct publisher {
    amqp_connection_state_t conn;
    uint64_t sent;
};

struct publish_job {
    struct publisher *publisher;
    const struct options *options;
    const char *queue;
    amqp_bytes_t body;
};

/* Publishes count messages with at most window unconfirmed; returns when every one is confirmed. */
static void *publish_all(void *argument) {
    struct publish_job *job = argument;
    struct publisher *p = job->publisher;
    long count = job->options->count, window = job->options->window;
    uint64_t base = p->sent; /* tags of this phase are base+1 ... base+count */
    char *acked = calloc((size_t)count + 1, 1);
    long confirmed = 0, sent = 0, low = 1; /* every tag below base+low is confirmed */
    amqp_basic_properties_t props;
    memset(&props, 0, sizeof props);
    props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
    props.delivery_mode = 2;
    if (job->options->max_priority > 0) {
        props._flags |= AMQP_BASIC_PRIORITY_FLAG;
        props.priority = (uint8_t)job->options->max_priority;
    }
    amqp_bytes_t routing_key = amqp_cstring_bytes(job->queue);

    while (confirmed < count) {
        while (sent < count && sent - confirmed < window) {
            int status = amqp_basic_publish(p->conn, 1, amqp_empty_bytes, routing_key, 0, 0, &props, job->body);
            if (status != AMQP_STATUS_OK) die("basic.publish", amqp_error_string2(status));
            sent++;
        }
        amqp_maybe_release_buffers(p->conn);
        amqp_frame_t frame;
        int status = amqp_simple_wait_frame(p->conn, &frame);
        if (status != AMQP_STATUS_OK) die("wait for confirm", amqp_error_string2(status));
        if (frame.frame_type != AMQP_FRAME_METHOD) continue;
        if (frame.payload.method.id == AMQP_BASIC_NACK_METHOD) die("confirm", "basic.nack");
        if (frame.payload.method.id != AMQP_BASIC_ACK_METHOD) continue;
        amqp_basic_ack_t *ack = frame.payload.method.decoded;
        long tag = (long)(ack->delivery_tag - base);
        if (tag < 1 || tag > count) continue;
        for (long t = ack->multiple ? low : tag; t <= tag; t++) {
            if (!acked[t]) {
                acked[t] = 1;
                confirmed++;
            }
        }
        while (low <= count && acked[low]) low++;
    }
    p->sent += (uint64_t)count;
    free(acked);
    return NULL;
}

/* Consumes and acks count messages on a fresh channel (a multiple ack every ack_every), then closes it. */
static void consume_all(amqp_connection_state_t conn, amqp_channel_t channel, const struct options *options,
                        const char *queue) {
    open_channel(conn, channel);
    amqp_basic_qos(conn, channel, 0, (uint16_t)options->prefetch, 0);
    check_reply(amqp_get_rpc_reply(conn), "basic.qos");
    amqp_basic_consume(conn, channel, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
    check_reply(amqp_get_rpc_reply(conn), "basic.consume");
    for (long received = 0; received < options->count; received++) {
        amqp_envelope_t envelope;
        amqp_maybe_release_buffers(conn);
        check_reply(amqp_consume_message(conn, &envelope, NULL, 0), "consume");
        /* One ack for the last ACK_EVERY deliveries (multiple=true), and one for the last delivery. */
        if ((received + 1) % options->ack_every == 0 || received + 1 == options->count) {
            int status = amqp_basic_ack(conn, channel, envelope.delivery_tag, options->ack_every > 1);
            if (status != AMQP_STATUS_OK) die("basic.ack", amqp_error_string2(status));
        }
        amqp_destroy_envelope(&envelope);
    }
    /* The queue is empty now (as many consumed as published), so nothing is in flight on the channel. */
    check_reply(amqp_channel_close(conn, channel, AMQP_REPLY_SUCCESS), "channel.close");
}

static void parse(int argc, char **argv, struct options *o) {
    o->url = getenv("HERALD_AMQP_URL");
    o->count = 100000;
    o->size = 300;
    o->queue_type = "classic";
    o->prefetch = 1000;
    o->ack_every = 500;
    o->window = 1000;
    o->max_priority = 0;
    o->json = 0;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(flag, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (!value) die("missing value for", flag);
        i++;
        if (strcmp(flag, "--amqp-url") == 0) o->url = (char *)value;
        else if (strcmp(flag, "--count") == 0) o->count = atol(value);
        else if (strcmp(flag, "--size") == 0) o->size = atol(value);
        else if (strcmp(flag, "--queue-type") == 0) o->queue_type = value;
        else if (strcmp(flag, "--prefetch") == 0) o->prefetch = atoi(value);
        else if (strcmp(flag, "--ack-every") == 0) o->ack_every = atol(value);
        else if (strcmp(flag, "--confirm-window") == 0) o->window = atol(value);
        else if (strcmp(flag, "--max-priority") == 0) o->max_priority = atoi(value);
        else die("unknown flag", flag);
    }
    if (!o->url) die("--amqp-url", "required (or set HERALD_AMQP_URL)");
    if (o->count <= 0 || o->window <= 0 || o->size < 0) die("options", "count and window must be positive");
    if (o->prefetch < 1 || o->prefetch > 65535) die("options", "prefetch must be 1 to 65535");
    if (o->ack_every < 1 || o->ack_every > o->prefetch) die("options", "ack-every must be 1 to the prefetch");
}

int main(int argc, char **argv) {
    struct options options;
    parse(argc, argv, &options);

    struct publisher publisher = {open_connection(options.url), 0};
    open_channel(publisher.conn, 1);
    amqp_confirm_select(publisher.conn, 1);
    check_reply(amqp_get_rpc_reply(publisher.conn), "confirm.select");
    amqp_connection_state_t consumer = open_connection(options.url);

    /* Queue operations on channel 2, so that channel 1 carries nothing but publishes and their confirms. */
    open_channel(publisher.conn, 2);
    char queue[64];
    snprintf(queue, sizeof queue, "herald-bench-c-%ld-%ld", (long)getpid(), (long)time(NULL));
    amqp_table_entry_t entries[2];
    entries[0].key = amqp_cstring_bytes("x-queue-type");
    entries[0].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[0].value.value.bytes = amqp_cstring_bytes(options.queue_type);
    entries[1].key = amqp_cstring_bytes("x-max-priority");
    entries[1].value.kind = AMQP_FIELD_KIND_I32;
    entries[1].value.value.i32 = options.max_priority;
    amqp_table_t arguments = {options.max_priority > 0 ? 2 : 1, entries};
    amqp_queue_declare(publisher.conn, 2, amqp_cstring_bytes(queue), 0, 1, 0, 0, arguments);
    check_reply(amqp_get_rpc_reply(publisher.conn), "queue.declare");

    char *body = malloc((size_t)options.size + 1);
    memset(body, 'x', (size_t)options.size);
    struct publish_job job = {&publisher, &options, queue, {(size_t)options.size, body}};

    double start = now_seconds(), cpu = cpu_seconds();
    publish_all(&job);
    double publish_rate = (double)options.count / (now_seconds() - start);
    double publish_cpu = (cpu_seconds() - cpu) * 1e6 / (double)options.count;

    start = now_seconds(), cpu = cpu_seconds();
    consume_all(consumer, 1, &options, queue);
    double consume_rate = (double)options.count / (now_seconds() - start);
    double consume_cpu = (cpu_seconds() - cpu) * 1e6 / (double)options.count;

    start = now_seconds(), cpu = cpu_seconds();
    pthread_t thread;
    if (pthread_create(&thread, NULL, publish_all, &job) != 0) die("pthread_create", "failed");
    consume_all(consumer, 2, &options, queue);
    pthread_join(thread, NULL);
    double concurrent_rate = (double)options.count / (now_seconds() - start);
    double concurrent_cpu = (cpu_seconds() - cpu) * 1e6 / (double)options.count;

    amqp_queue_delete(publisher.conn, 2, amqp_cstring_bytes(queue), 0, 0);
    check_reply(amqp_get_rpc_reply(publisher.conn), "queue.delete");
    amqp_connection_close(consumer, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(consumer);
    amqp_connection_close(publisher.conn, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(publisher.conn);
    free(body);

    if (options.json) {
        printf("{\"implementation\":\"c\",\"count\":%ld,\"size\":%ld,\"queue_type\":\"%s\",\"prefetch\":%d,"
               "\"ack_every\":%ld,\"confirm_window\":%ld,\"max_priority\":%d,\"publish_per_second\":%ld,\"consume_per_second\":%ld,"
               "\"concurrent_per_second\":%ld,\"publish_cpu_us_per_message\":%.2f,"
               "\"consume_cpu_us_per_message\":%.2f,\"concurrent_cpu_us_per_message\":%.2f}\n",
               options.count, options.size, options.queue_type, options.prefetch, options.ack_every, options.window,
               options.max_priority, (long)publish_rate, (long)consume_rate, (long)concurrent_rate, publish_cpu, consume_cpu,
               concurrent_cpu);
    } else {
        printf("%ld x %ld B, %s queue, prefetch %d, a multiple ack every %ld, confirm window %ld\n", options.count,
               options.size, options.queue_type, options.prefetch, options.ack_every, options.window);
        printf("publish (confirmed):   %ld msg/s, %.2f us CPU/msg\n", (long)publish_rate, publish_cpu);
        printf("consume (acked):       %ld msg/s, %.2f us CPU/msg\n", (long)consume_rate, consume_cpu);
        printf("both at once:          %ld msg/s, %.2f us CPU/msg\n", (long)concurrent_rate, concurrent_cpu);
    }
    return 0;
}
