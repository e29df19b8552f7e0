#!/usr/bin/env bash
# `make cluster-test`: Herald on a three-node RabbitMQ cluster (deploy/dev/cluster.sh) with quorum queues, one
# broadcast to 100,000 devices delivered by three worker processes (each connected to a different node) to the APNs
# simulator running as its own process, and one RabbitMQ node — by default the leader of herald.batches — stopped in
# the middle of the run and started again later.
#
# Asserts: every live device received its notification (unique tokens in the simulator's record file), duplicates
# stay within one batch-prefetch window of each interrupted worker, the job ends `done` in PostgreSQL with the dead
# devices pruned, and every worker is still running and consuming again (it reconnected by itself) and drains to
# exit 0 on SIGTERM.
#
# Environment: HERALD_BIN (default .build/release/herald), CLUSTER_TEST_DEVICES (100000), CLUSTER_TEST_DEAD (1000),
# CLUSTER_TEST_STOP_NODE (1-3; default: the node leading herald.batches), CLUSTER_TEST_STOP_AT (notifications
# received before the stop, default a quarter of the devices), CLUSTER_TEST_BATCH_SIZE (1000),
# CLUSTER_TEST_BATCH_PREFETCH (1), CLUSTER_TEST_KEEP=1 (leave the cluster up afterwards), CLUSTER_TEST_FRESH=0
# (reuse a running cluster instead of a new one), CLUSTER_TEST_LOG_LEVEL (the workers', default info).
# Needs the dev PostgreSQL (make services-up). Work files and logs: .state/cluster/run/.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)
cd "$REPO_ROOT"

CLUSTER=$SCRIPT_DIR/cluster.sh
SERVICES=$SCRIPT_DIR/services.sh
HERALD=${HERALD_BIN:-$REPO_ROOT/.build/release/herald}
DEVICES=${CLUSTER_TEST_DEVICES:-100000}
DEAD=${CLUSTER_TEST_DEAD:-1000}
LIVE=$((DEVICES - DEAD))
STOP_AT=${CLUSTER_TEST_STOP_AT:-$((LIVE / 4))}
BATCH_SIZE=${CLUSTER_TEST_BATCH_SIZE:-1000}
BATCH_PREFETCH=${CLUSTER_TEST_BATCH_PREFETCH:-1}
RUN_DIR=$REPO_ROOT/.state/cluster/run
TLS_DIR=$REPO_ROOT/.state/cluster/tls
APP=com.herald.cluster
DATABASE=herald_cluster
DATABASE_URL="postgres://herald:herald-dev@127.0.0.1:55432/$DATABASE"
SIM_PORT=${CLUSTER_TEST_SIM_PORT:-58520}
METRICS_BASE_PORT=59461
JOB_TIMEOUT=${CLUSTER_TEST_JOB_TIMEOUT:-600}
RECONNECT_TIMEOUT=${CLUSTER_TEST_RECONNECT_TIMEOUT:-120}

log() { printf 'cluster-test: %s\n' "$*" >&2; }
die() {
    printf 'cluster-test: FAILED: %s\n' "$*" >&2
    exit 1
}

[ -x "$HERALD" ] || die "$HERALD not found: build it first (make release)"
"$SERVICES" status >/dev/null 2>&1 || die "the dev PostgreSQL is not running (make services-up)"

WORKER_PIDS=()
SIM_PID=
cleanup() {
    local pid
    for pid in "${WORKER_PIDS[@]}" $SIM_PID; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${WORKER_PIDS[@]}" $SIM_PID; do
        timeout 30 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    done
    if [ "${CLUSTER_TEST_KEEP:-0}" != 1 ]; then "$CLUSTER" down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

psql_cluster() { "$SERVICES" psql -d "$DATABASE" -qAtX -c "$1"; }

# --- TLS material for the simulator (a throwaway CA, a server certificate for 127.0.0.1, a provider key) -----------
make_tls() {
    [ -s "$TLS_DIR/server.pem" ] && [ -s "$TLS_DIR/AuthKey_CLUSTER123.p8" ] && return 0
    mkdir -p "$TLS_DIR"
    (
        umask 077
        cd "$TLS_DIR"
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key 2>/dev/null
        openssl req -x509 -new -sha256 -days 3650 -key ca.key -subj "/CN=Herald Cluster Test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out ca.pem
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key 2>/dev/null
        openssl req -new -key server.key -subj "/CN=127.0.0.1" -out server.csr
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
        openssl x509 -req -sha256 -days 3650 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
            -extfile server.ext -out server.pem 2>/dev/null
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_CLUSTER123.p8 2>/dev/null
    )
}

# --- set-up -----------------------------------------------------------------------------------------------------------
started=$SECONDS
if [ "${CLUSTER_TEST_FRESH:-1}" = 1 ] || ! "$CLUSTER" status >/dev/null 2>&1; then
    "$CLUSTER" clean >/dev/null 2>&1 || true # (removes .state/cluster, so before anything is written there)
    "$CLUSTER" up
fi
make_tls
rm -rf -- "$RUN_DIR"
mkdir -p "$RUN_DIR"
mapfile -t URLS < <("$CLUSTER" urls)
cluster_ready=$SECONDS

log "database $DATABASE: fresh, migrated, $DEVICES devices ($DEAD of them dead)"
"$SERVICES" psql -qAtX -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" >/dev/null
"$SERVICES" psql -qAtX -c "CREATE DATABASE $DATABASE OWNER herald" >/dev/null
HERALD_DATABASE_URL=$DATABASE_URL "$HERALD" migrate --schemas "$REPO_ROOT/schemas" >/dev/null
awk -v live="$LIVE" -v dead="$DEAD" 'BEGIN {
    print "token,user_id,locale,topics"
    for (i = 0; i < live; i++) printf "c0de%060x,,,\n", i
    for (i = 0; i < dead; i++) printf "dead%060x,,,\n", i
}' >"$RUN_DIR/devices.csv"
HERALD_DATABASE_URL=$DATABASE_URL "$HERALD" devices import --app "$APP" --file "$RUN_DIR/devices.csv" >/dev/null

log "simulator on 127.0.0.1:$SIM_PORT, recording to ${RUN_DIR#"$REPO_ROOT"/}/records.jsonl"
"$HERALD" apns-sim --port "$SIM_PORT" --certificate "$TLS_DIR/server.pem" --private-key "$TLS_DIR/server.key" \
    --provider-key "CLUSTER123:CLUSTERTM1:$TLS_DIR/AuthKey_CLUSTER123.p8" --dead-token-prefix dead \
    --record-file "$RUN_DIR/records.jsonl" >"$RUN_DIR/simulator.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 100); do
    grep -q listening "$RUN_DIR/simulator.log" 2>/dev/null && break
    kill -0 "$SIM_PID" 2>/dev/null || die "the simulator exited: $(tail -n 5 "$RUN_DIR/simulator.log")"
    sleep 0.1
done

cat >"$RUN_DIR/apps.json" <<EOF
{"apps": [{"id": "$APP", "topic": "$APP", "environment": "production",
           "endpoint": "https://127.0.0.1:$SIM_PORT", "ca_file": "$TLS_DIR/ca.pem",
           "auth": {"type": "token", "team_id": "CLUSTERTM1", "key_id": "CLUSTER123",
                    "key_file": "$TLS_DIR/AuthKey_CLUSTER123.p8"}}]}
EOF

for i in 1 2 3; do
    HERALD_AMQP_URL=${URLS[$((i - 1))]} HERALD_DATABASE_URL=$DATABASE_URL HERALD_APPS_FILE=$RUN_DIR/apps.json \
        HERALD_METRICS_HOST=127.0.0.1 HERALD_METRICS_PORT=$((METRICS_BASE_PORT + i - 1)) HERALD_LOG_LEVEL=${CLUSTER_TEST_LOG_LEVEL:-info} \
        "$HERALD" worker --queue-type quorum --batch-size "$BATCH_SIZE" --batch-prefetch "$BATCH_PREFETCH" \
        >"$RUN_DIR/worker-$i.log" 2>&1 &
    WORKER_PIDS+=($!)
done
for i in 1 2 3; do
    for _ in $(seq 1 300); do
        curl -fs "http://127.0.0.1:$((METRICS_BASE_PORT + i - 1))/health/ready" >/dev/null 2>&1 && break
        kill -0 "${WORKER_PIDS[$((i - 1))]}" 2>/dev/null || die "worker $i exited: $(tail -n 5 "$RUN_DIR/worker-$i.log")"
        sleep 0.2
    done
done
log "3 workers ready (worker N on node N)"

# The node to stop: the leader of herald.batches unless told otherwise, so that the stop forces a leader election
# as well as cutting off the worker connected to that node.
STOP_NODE=${CLUSTER_TEST_STOP_NODE:-}
if [ -z "$STOP_NODE" ]; then
    leader=$("$CLUSTER" rabbitmqctl 1 -q list_queues name leader --no-table-headers | awk '$1 == "herald.batches" { print $2 }')
    STOP_NODE=${leader#herald-c}
    STOP_NODE=${STOP_NODE%@*}
    [[ $STOP_NODE =~ ^[123]$ ]] || STOP_NODE=2
fi

# --- the run ----------------------------------------------------------------------------------------------------------
JOB=cluster-$(date +%s)
log "publishing broadcast $JOB to $DEVICES devices"
run_start=$SECONDS
HERALD_AMQP_URL=${URLS[2]} "$HERALD" publish --app "$APP" --all --id "$JOB" --title Herald \
    --alert "Cluster test broadcast" >/dev/null

received() { [ -f "$RUN_DIR/records.jsonl" ] && wc -l <"$RUN_DIR/records.jsonl" || echo 0; }
until [ "$(received)" -ge "$STOP_AT" ]; do
    [ $((SECONDS - run_start)) -lt "$JOB_TIMEOUT" ] || die "only $(received) notifications after ${JOB_TIMEOUT}s"
    sleep 0.2
done
log "$(received) notifications received: stopping node $STOP_NODE (leader of herald.batches: ${leader:-n/a})"
stop_at_received=$(received)
"$CLUSTER" stop-node "$STOP_NODE"
stopped_at_received=$(received)
log "node $STOP_NODE stopped ($stopped_at_received received); starting it again"
"$CLUSTER" start-node "$STOP_NODE"
restarted_at_received=$(received)
log "node $STOP_NODE back ($restarted_at_received received)"

state=
until [[ $state =~ ^(done|failed|cancelled)$ ]]; do
    [ $((SECONDS - run_start)) -lt "$JOB_TIMEOUT" ] ||
        die "job $JOB still '${state:-unknown}' after ${JOB_TIMEOUT}s ($(received) received)"
    sleep 0.5
    state=$(psql_cluster "SELECT state FROM jobs WHERE id = '$JOB'" 2>/dev/null || true)
done
run_seconds=$((SECONDS - run_start))

# The interrupted worker must get back to consuming on its own: its log says the connection came back, and its
# readiness endpoint answers 200 again.
failures=()
interrupted=$STOP_NODE
interrupted_pid=${WORKER_PIDS[$((interrupted - 1))]}
deadline=$((SECONDS + RECONNECT_TIMEOUT))
until grep -q "AMQP connection re-established" "$RUN_DIR/worker-$interrupted.log" &&
    curl -fs "http://127.0.0.1:$((METRICS_BASE_PORT + interrupted - 1))/health/ready" >/dev/null 2>&1; do
    if ! kill -0 "$interrupted_pid" 2>/dev/null; then
        failures+=("worker $interrupted exited instead of reconnecting: $(grep -E '^Error' "$RUN_DIR/worker-$interrupted.log" | tail -n 1)")
        break
    fi
    if [ $SECONDS -ge $deadline ]; then
        failures+=("worker $interrupted did not reconnect within ${RECONNECT_TIMEOUT}s")
        break
    fi
    sleep 0.5
done
reconnects=$(grep -c "AMQP connection re-established" "$RUN_DIR/worker-$interrupted.log" || true)

# --- checks -----------------------------------------------------------------------------------------------------------
total=$(received)
unique=$(grep -oE '"token":"[0-9a-f]{64}"' "$RUN_DIR/records.jsonl" | sort -u | wc -l)
dead_received=$(grep -cE '"token":"dead' "$RUN_DIR/records.jsonl" || true)
duplicates=$((total - unique))
bound=$((BATCH_SIZE * BATCH_PREFETCH))
IFS='|' read -r sent pruned failed targeted <<<"$(psql_cluster \
    "SELECT sent, pruned, failed, targeted FROM jobs WHERE id = '$JOB'")"
parked=$("$CLUSTER" rabbitmqctl 1 -q list_queues name messages --no-table-headers |
    awk '$1 == "herald.parked" { print $2 }')

[ "$state" = "done" ] || failures+=("job state is '$state', expected done")
[ "$unique" -eq "$LIVE" ] || failures+=("$unique live devices received a notification, expected $LIVE (lost $((LIVE - unique)))")
[ "$dead_received" -eq 0 ] || failures+=("$dead_received dead tokens were recorded as delivered")
[ "$duplicates" -le "$bound" ] || failures+=("$duplicates duplicates, more than one batch window ($bound) of the interrupted worker")
[ "${pruned:-0}" -eq "$DEAD" ] || failures+=("$pruned devices pruned, expected $DEAD")
[ "${parked:-0}" -eq 0 ] || failures+=("$parked messages parked")
running=()
for i in 1 2 3; do
    if kill -0 "${WORKER_PIDS[$((i - 1))]}" 2>/dev/null; then running+=("$i"); else
        failures+=("worker $i is not running any more")
    fi
done

# Drain: SIGTERM, every worker still running exits 0.
for i in "${running[@]}"; do kill -TERM "${WORKER_PIDS[$((i - 1))]}" 2>/dev/null || true; done
for i in "${running[@]}"; do
    if wait "${WORKER_PIDS[$((i - 1))]}"; then :; else failures+=("worker $i exited $? after SIGTERM"); fi
done
WORKER_PIDS=()

summary=$(printf '{"devices":%d,"live":%d,"received":%d,"unique":%d,"duplicates":%d,"duplicate_bound":%d,' \
    "$DEVICES" "$LIVE" "$total" "$unique" "$duplicates" "$bound")
summary+=$(printf '"job_state":"%s","sent":%s,"pruned":%s,"failed":%s,"targeted":%s,"stopped_node":%d,' \
    "$state" "${sent:-null}" "${pruned:-null}" "${failed:-null}" "${targeted:-null}" "$STOP_NODE")
summary+=$(printf '"stopped_at_received":%d,"restarted_at_received":%d,"reconnects":%d,' \
    "$stop_at_received" "$restarted_at_received" "$reconnects")
summary+=$(printf '"cluster_start_seconds":%d,"run_seconds":%d,"total_seconds":%d}' \
    $((cluster_ready - started)) "$run_seconds" $((SECONDS - started)))
echo "$summary" | tee "$RUN_DIR/summary.json"

"$SERVICES" psql -qAtX -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" >/dev/null 2>&1 || true
if [ ${#failures[@]} -gt 0 ]; then
    for f in "${failures[@]}"; do log "FAILED: $f"; done
    log "logs: ${RUN_DIR#"$REPO_ROOT"/}/"
    echo "cluster-test: 0 passed, 1 failed"
    exit 1
fi
log "every live device notified once or more ($duplicates duplicates <= $bound), job done, workers reconnected"
echo "cluster-test: 1 passed, 0 failed"
