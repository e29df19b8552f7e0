#!/usr/bin/env bash
# A three-node RabbitMQ cluster on this machine, for `make cluster-test`: Herald's queues as quorum queues on a real
# cluster, with nodes that can be stopped and started one at a time.
#
# Same approach as services.sh (which runs the single dev node): rabbitmq-server started directly, with every
# RABBITMQ_*/ERL_* setting in a clean environment, state under the project's .state/, loopback only. The three nodes
# share one HOME (so one Erlang cookie) and one private epmd port, and each has its own node name, ports, Mnesia and
# log directories.
#
# Usage: deploy/dev/cluster.sh up|down|clean|status|stop-node N|start-node N|urls|rabbitmqctl N ARGS...
#
#   node  name                AMQP              dist   state
#   1     herald-c1@localhost 127.0.0.1:56820   56830  .state/cluster/c1
#   2     herald-c2@localhost 127.0.0.1:56821   56831  .state/cluster/c2
#   3     herald-c3@localhost 127.0.0.1:56822   56832  .state/cluster/c3
#   epmd 43691 (the dev node's is 43690), CLI dist ports 56840-56849, user herald / herald-dev on vhost /.
#
# `up` starts the nodes, joins 2 and 3 to 1, provisions the user and imports deploy/rabbitmq/definitions.json (the
# quorum topology `herald topology export --queue-type quorum` writes). Logs: .state/cluster/cN/log/, .state/logs/.
set -euo pipefail

SCRIPT_PATH=$(readlink -f -- "${BASH_SOURCE[0]}")
SCRIPT_DIR=$(cd -- "$(dirname -- "$SCRIPT_PATH")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)

CLUSTER_DIR=$REPO_ROOT/.state/cluster
LOG_DIR=$REPO_ROOT/.state/logs
DEFINITIONS=$REPO_ROOT/deploy/rabbitmq/definitions.json
RMQ_BIN=/usr/lib/rabbitmq/bin
EPMD_PORT=43691
AMQP_BASE_PORT=56820
DIST_BASE_PORT=56830
CTL_DIST_PORT_MIN=56840
CTL_DIST_PORT_MAX=56849
APP_USER=herald
APP_PASSWORD=herald-dev
START_TIMEOUT=${HERALD_RMQ_START_TIMEOUT:-120}
STOP_TIMEOUT=${HERALD_RMQ_STOP_TIMEOUT:-60}
NODES=(1 2 3)

log() { printf 'cluster: %s\n' "$*" >&2; }
die() {
    printf 'cluster: error: %s\n' "$*" >&2
    exit 1
}

node_name() { printf 'herald-c%s@localhost' "$1"; }
node_dir() { printf '%s/c%s' "$CLUSTER_DIR" "$1"; }
amqp_port() { printf '%s' $((AMQP_BASE_PORT + $1 - 1)); }
dist_port() { printf '%s' $((DIST_BASE_PORT + $1 - 1)); }
amqp_url() { printf 'amqp://%s:%s@127.0.0.1:%s/%%2f' "$APP_USER" "$APP_PASSWORD" "$(amqp_port "$1")"; }

check_node() { [[ ${1:-} =~ ^[123]$ ]] || die "node must be 1, 2 or 3 (got '${1:-}')"; }

tcp_open() {
    # shellcheck disable=SC2016 # $1 is expanded by the inner bash
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

proc_alive() {
    local pid=$1 stat
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# Daemons must not inherit our pipes (a caller reading our output until EOF would wait forever).
close_extra_fds() {
    local fd
    for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        if [[ $fd =~ ^[0-9]+$ ]] && [ "$fd" -gt 2 ]; then
            eval "exec $fd>&-" 2>/dev/null || true
        fi
    done
}

# The complete environment of node $1 and of the CLI talking to it (`env -i`: nothing of the caller's leaks in).
node_env() {
    local n=$1 dir
    dir=$(node_dir "$n")
    NODE_ENV=(
        HOME="$CLUSTER_DIR" # one .erlang.cookie for the three nodes and the CLI
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        LANG=C.UTF-8 LC_ALL=C.UTF-8
        RABBITMQ_NODENAME="$(node_name "$n")"
        RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
        RABBITMQ_NODE_PORT="$(amqp_port "$n")"
        RABBITMQ_DIST_PORT="$(dist_port "$n")"
        RABBITMQ_CTL_DIST_PORT_MIN="$CTL_DIST_PORT_MIN"
        RABBITMQ_CTL_DIST_PORT_MAX="$CTL_DIST_PORT_MAX"
        ERL_EPMD_PORT="$EPMD_PORT"
        ERL_EPMD_ADDRESS=127.0.0.1
        # Three nodes share 2 cores with everything else: schedulers sleep when idle (see services.sh).
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} +sbwt none +sbwtdcpu none +sbwtdio none"
        RABBITMQ_MNESIA_BASE="$dir/mnesia"
        RABBITMQ_LOG_BASE="$dir/log"
        RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
        RABBITMQ_CONFIG_FILES="$dir/conf.d"
        RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
        RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
        RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
        RABBITMQ_PID_FILE="$dir/rabbitmq.pid"
        RABBITMQ_MOTD_FILE="$dir/motd"
    )
}

ctl() { # ctl N ARGS...
    local n=$1
    shift
    node_env "$n"
    env -i "${NODE_ENV[@]}" "$RMQ_BIN/rabbitmqctl" -n "$(node_name "$n")" "$@"
}

node_pid() { head -n 1 "$(node_dir "$1")/rabbitmq.pid" 2>/dev/null; }

node_running() {
    local pid environ
    pid=$(node_pid "$1") || return 1
    proc_alive "$pid" || return 1
    environ=$({ tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null) || return 1
    grep -qxF -- "RABBITMQ_MNESIA_BASE=$(node_dir "$1")/mnesia" <<<"$environ"
}

ensure_cookie() {
    mkdir -p "$CLUSTER_DIR"
    if [ ! -s "$CLUSTER_DIR/.erlang.cookie" ]; then
        (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F >"$CLUSTER_DIR/.erlang.cookie")
    fi
    chmod 400 "$CLUSTER_DIR/.erlang.cookie"
}

write_config() {
    local dir
    dir=$(node_dir "$1")
    mkdir -p "$dir/mnesia" "$dir/log" "$dir/conf.d" "$LOG_DIR"
    cat >"$dir/rabbitmq.conf" <<'EOF'
# Written by deploy/dev/cluster.sh on every start; edits are overwritten.
log.console = false
log.file.level = info
disk_free_limit.absolute = 50MB
# A stopped node is an expected event in the cluster test: keep serving on the majority.
cluster_partition_handling = pause_minority
EOF
    printf '[].\n' >"$dir/enabled_plugins"
}

wait_ready() { # wait_ready N PID
    local n=$1 launched=$2 deadline=$((SECONDS + START_TIMEOUT))
    until tcp_open "$(amqp_port "$n")"; do
        proc_alive "$launched" || die "node $n exited during start-up (logs: $(node_dir "$n")/log/)"
        [ $SECONDS -lt $deadline ] || die "node $n not accepting AMQP after ${START_TIMEOUT}s"
        sleep 0.25
    done
    ctl "$n" -q await_startup --timeout "$START_TIMEOUT" >/dev/null 2>>"$LOG_DIR/cluster-ctl.err" ||
        die "node $n did not finish booting (logs: $(node_dir "$n")/log/)"
}

start_node() {
    local n=$1
    if node_running "$n"; then
        log "node $n already running (pid $(node_pid "$n"))"
        return 0
    fi
    [ -x "$RMQ_BIN/rabbitmq-server" ] || die "$RMQ_BIN/rabbitmq-server not found (make services-up installs it)"
    ensure_cookie
    write_config "$n"
    rm -f -- "$(node_dir "$n")/rabbitmq.pid"
    local p
    for p in "$(amqp_port "$n")" "$(dist_port "$n")"; do
        tcp_open "$p" && die "port $p is in use by another process"
    done
    log "starting node $n ($(node_name "$n") on 127.0.0.1:$(amqp_port "$n"))"
    node_env "$n"
    printf '\n==== %s starting %s\n' "$(date -u +%FT%TZ)" "$(node_name "$n")" >>"$LOG_DIR/cluster-c$n.out"
    (
        cd "$(node_dir "$n")"
        close_extra_fds
        exec setsid -w env -i "${NODE_ENV[@]}" "$RMQ_BIN/rabbitmq-server"
    ) </dev/null >>"$LOG_DIR/cluster-c$n.out" 2>&1 &
    local launched=$!
    disown "$launched" 2>/dev/null || true
    wait_ready "$n" "$launched"
    log "node $n ready"
}

stop_node() {
    local n=$1 pid
    if ! node_running "$n"; then
        log "node $n already stopped"
        return 0
    fi
    pid=$(node_pid "$n")
    log "stopping node $n (pid $pid)"
    node_env "$n"
    # Graceful stop through the CLI, bounded so a wedged node cannot hang us.
    timeout "$STOP_TIMEOUT" env -i "${NODE_ENV[@]}" "$RMQ_BIN/rabbitmqctl" -n "$(node_name "$n")" -q stop \
        >>"$LOG_DIR/cluster-ctl.err" 2>&1 || log "rabbitmqctl stop failed; using signals"
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while proc_alive "$pid"; do
        if [ $SECONDS -ge $deadline ]; then
            kill -TERM "$pid" 2>/dev/null || true
            sleep 5
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
            break
        fi
        sleep 0.1
    done
    rm -f -- "$(node_dir "$n")/rabbitmq.pid"
    log "node $n stopped"
}

# Joins nodes 2 and 3 to node 1 (idempotent: a node already in the cluster is left alone).
join_cluster() {
    local n running
    for n in 2 3; do
        running=$(ctl "$n" -q cluster_status --formatter json 2>/dev/null || true)
        if grep -q "$(node_name 1)" <<<"$running"; then continue; fi
        log "joining node $n to $(node_name 1)"
        {
            ctl "$n" -q stop_app
            ctl "$n" -q reset
            ctl "$n" -q join_cluster "$(node_name 1)"
            ctl "$n" -q start_app
        } >>"$LOG_DIR/cluster-ctl.err" 2>&1 || die "node $n could not join the cluster (see $LOG_DIR/cluster-ctl.err)"
    done
}

provision() {
    {
        ctl 1 -q add_user "$APP_USER" "$APP_PASSWORD" || ctl 1 -q change_password "$APP_USER" "$APP_PASSWORD"
        ctl 1 -q set_permissions -p / "$APP_USER" '.*' '.*' '.*'
    } >>"$LOG_DIR/cluster-ctl.err" 2>&1 || die "could not provision user $APP_USER"
    [ -s "$DEFINITIONS" ] || die "$DEFINITIONS is missing (herald topology export --queue-type quorum writes it)"
    ctl 1 -q import_definitions "$DEFINITIONS" >>"$LOG_DIR/cluster-ctl.err" 2>&1 ||
        die "could not import $DEFINITIONS"
}

cmd_up() {
    local n
    mkdir -p "$LOG_DIR"
    for n in "${NODES[@]}"; do start_node "$n"; done
    join_cluster
    provision
    log "cluster up: $(urls | tr '\n' ' ')"
}

cmd_down() {
    local n
    for n in 3 2 1; do stop_node "$n"; done
    if command -v epmd >/dev/null 2>&1 && ERL_EPMD_PORT=$EPMD_PORT epmd -names >/dev/null 2>&1; then
        ERL_EPMD_PORT=$EPMD_PORT epmd -kill >/dev/null 2>&1 || true
    fi
}

cmd_status() {
    local n rc=0
    for n in "${NODES[@]}"; do
        if node_running "$n"; then
            echo "node $n: running (pid $(node_pid "$n"), 127.0.0.1:$(amqp_port "$n"))"
        else
            echo "node $n: stopped"
            rc=1
        fi
    done
    return $rc
}

urls() {
    local n
    for n in "${NODES[@]}"; do amqp_url "$n"; echo; done
}

case ${1:-} in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    urls) urls ;;
    stop-node)
        check_node "${2:-}"
        stop_node "$2"
        ;;
    start-node)
        check_node "${2:-}"
        start_node "$2"
        ;;
    rabbitmqctl)
        check_node "${2:-}"
        n=$2
        shift 2
        ctl "$n" "$@"
        ;;
    clean)
        cmd_down
        rm -rf -- "$CLUSTER_DIR"
        ;;
    *)
        sed -n '2,19p' "$SCRIPT_PATH" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
