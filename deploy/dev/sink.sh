#!/usr/bin/env bash
# A fast HTTP/2 sink for benchmarks: nginx on loopback with TLS (the demo CA's server certificate), answering 200 to
# every POST /3/device/…, so that the client side is what is measured. Both `herald bench` and h2load use it.
#
# Usage: deploy/dev/sink.sh start|stop|url     (port: HERALD_SINK_PORT, default 58443)
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)
STATE=$REPO_ROOT/.state
SINK_DIR=$STATE/sink
DEMO_DIR=$STATE/demo
PORT=${HERALD_SINK_PORT:-58443}

die() { echo "sink: $*" >&2; exit 1; }

start() {
    command -v nginx >/dev/null 2>&1 || die "nginx is not installed (make services-up installs nginx-light)"
    [ -s "$DEMO_DIR/server.pem" ] || die "no certificate in $DEMO_DIR: run 'make demo' once (it creates the demo CA)"
    mkdir -p "$SINK_DIR/tmp" "$STATE/logs"
    if [ -s "$SINK_DIR/nginx.pid" ] && kill -0 "$(cat "$SINK_DIR/nginx.pid")" 2>/dev/null; then
        echo "sink: already running on https://127.0.0.1:$PORT" >&2
        return
    fi
    cat > "$SINK_DIR/nginx.conf" <<CONF
worker_processes 1;
pid $SINK_DIR/nginx.pid;
error_log $STATE/logs/sink-error.log warn;
daemon on;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $SINK_DIR/tmp;
    proxy_temp_path $SINK_DIR/tmp;
    fastcgi_temp_path $SINK_DIR/tmp;
    uwsgi_temp_path $SINK_DIR/tmp;
    scgi_temp_path $SINK_DIR/tmp;
    server {
        listen 127.0.0.1:$PORT ssl http2;
        ssl_certificate $DEMO_DIR/server.pem;
        ssl_certificate_key $DEMO_DIR/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        http2_max_concurrent_streams 1000;
        keepalive_requests 1000000000;
        keepalive_timeout 600s;
        location /3/device/ { return 200; }
        location /v1/projects/ { return 200; }
        # A Web Push service: every push accepted as the services do (201).
        location /push/ { return 201; }
        # FCM's token endpoint for the benchmarks: a fixed access token (the sink checks no credential).
        location = /token {
            default_type application/json;
            return 200 '{"access_token":"ya29.herald-bench-token","expires_in":3599,"token_type":"Bearer"}';
        }
    }
}
CONF
    nginx -c "$SINK_DIR/nginx.conf" -p "$SINK_DIR" || die "nginx failed to start; see $STATE/logs/sink-error.log"
    for _ in $(seq 1 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && { echo "sink: https://127.0.0.1:$PORT" >&2; return; }
        sleep 0.1
    done
    die "nginx did not start listening on $PORT"
}

stop() {
    if [ -s "$SINK_DIR/nginx.pid" ]; then
        kill "$(cat "$SINK_DIR/nginx.pid")" 2>/dev/null || true
        rm -f "$SINK_DIR/nginx.pid"
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) echo "https://127.0.0.1:$PORT" ;;
    *) die "usage: $0 start|stop|url" ;;
esac
