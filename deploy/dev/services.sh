#!/usr/bin/env bash
# Herald dev services: a project-local PostgreSQL and RabbitMQ, loopback only.
#
# Everything lives under <repo>/.state/ so several checkouts never share data
# and `make clean-state` is a plain `rm -rf`. We never touch the system-wide
# PostgreSQL cluster or RabbitMQ node that the Debian packages may start: our
# instances use their own ports, data directories, epmd port and Erlang cookie.
#
# Usage: deploy/dev/services.sh up|down|status|env|stop-rabbitmq|start-rabbitmq|restart-rabbitmq
#        deploy/dev/services.sh rabbitmqctl ARGS... | psql ARGS...   (helpers for humans)
# Logs: .state/logs/ (postgres.log, rabbitmq-server.out, rabbitmq/ -> broker logs)
#
# Ports / credentials (tests and docs assume the defaults):
#   PostgreSQL  127.0.0.1:55432   role herald / herald-dev, database herald
#   RabbitMQ    127.0.0.1:56720   user herald / herald-dev, vhost /
#               dist 56721, amqps 56723, epmd 43690, CLI dist ports 56730-56739, node herald-dev@localhost
#
# A second checkout whose services must not clash with the first (a test that stops its PostgreSQL beside
# someone else's) picks other ports with these variables on `up`:
#   HERALD_DEV_PG_PORT HERALD_DEV_RMQ_PORT HERALD_DEV_RMQ_DIST_PORT HERALD_DEV_RMQ_TLS_PORT HERALD_DEV_EPMD_PORT
#   HERALD_DEV_RMQ_CTL_DIST_PORT_MIN HERALD_DEV_RMQ_CTL_DIST_PORT_MAX HERALD_DEV_RMQ_NODENAME
# `up` records them in .state/ports.env, so every later command of that checkout (down, stop-postgres, the
# outage tests' helpers) acts on the same services without them; a variable set later still wins. Its URLs are
# in .state/services.env as always.
set -euo pipefail

# --- locations ---------------------------------------------------------------

# Resolve symlinks so that a symlinked script still finds *its* repository.
SCRIPT_PATH=$(readlink -f -- "${BASH_SOURCE[0]}")
SCRIPT_DIR=$(cd -- "$(dirname -- "$SCRIPT_PATH")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)

STATE_DIR=$REPO_ROOT/.state
LOG_DIR=$STATE_DIR/logs
ENV_FILE=$STATE_DIR/services.env
PORTS_FILE=$STATE_DIR/ports.env
LOCK_FILE=$STATE_DIR/.services.lock

# --- ports -------------------------------------------------------------------

# The port variables `up` recorded (see the header), for those not set now. Read line by line, not sourced: only
# the known names, with a port number (or a node name) as the value.
PORT_VARIABLES=(HERALD_DEV_PG_PORT HERALD_DEV_RMQ_PORT HERALD_DEV_RMQ_DIST_PORT HERALD_DEV_RMQ_TLS_PORT
    HERALD_DEV_EPMD_PORT HERALD_DEV_RMQ_CTL_DIST_PORT_MIN HERALD_DEV_RMQ_CTL_DIST_PORT_MAX HERALD_DEV_RMQ_NODENAME)
if [ -f "$PORTS_FILE" ]; then
    while IFS='=' read -r name value; do
        case " ${PORT_VARIABLES[*]} " in *" $name "*) ;; *) continue ;; esac
        [[ $value =~ ^[A-Za-z0-9_.@-]+$ ]] || continue
        [ -n "${!name:-}" ] || printf -v "$name" '%s' "$value"
    done <"$PORTS_FILE"
fi
for name in "${PORT_VARIABLES[@]}"; do
    value=${!name:-}
    if [ -n "$value" ] && [ "$name" != HERALD_DEV_RMQ_NODENAME ]; then
        [[ $value =~ ^[0-9]+$ ]] && [ "$value" -ge 1 ] && [ "$value" -le 65535 ] ||
            { printf 'services: error: %s=%s is not a port number\n' "$name" "$value" >&2; exit 1; }
    fi
done

PG_DIR=$STATE_DIR/postgres
PG_DATA=$PG_DIR/data
PG_LOG=$LOG_DIR/postgres.log
PG_PORT=${HERALD_DEV_PG_PORT:-55432}
PG_SUPERUSER=postgres
PG_START_TIMEOUT=${HERALD_PG_START_TIMEOUT:-60}

RMQ_DIR=$STATE_DIR/rabbitmq
RMQ_NODENAME=${HERALD_DEV_RMQ_NODENAME:-herald-dev@localhost}
RMQ_PORT=${HERALD_DEV_RMQ_PORT:-56720}
RMQ_DIST_PORT=${HERALD_DEV_RMQ_DIST_PORT:-56721}
RMQ_TLS_PORT=${HERALD_DEV_RMQ_TLS_PORT:-56723} # amqps; 56722 is kept for the management plugin
RMQ_TLS_DIR=$RMQ_DIR/tls
RMQ_CTL_DIST_PORT_MIN=${HERALD_DEV_RMQ_CTL_DIST_PORT_MIN:-56730}
RMQ_CTL_DIST_PORT_MAX=${HERALD_DEV_RMQ_CTL_DIST_PORT_MAX:-56739}
RMQ_EPMD_PORT=${HERALD_DEV_EPMD_PORT:-43690}
RMQ_PID_FILE=$RMQ_DIR/rabbitmq.pid
RMQ_OUT_LOG=$LOG_DIR/rabbitmq-server.out
RMQ_BIN=/usr/lib/rabbitmq/bin
RMQ_START_TIMEOUT=${HERALD_RMQ_START_TIMEOUT:-120}
RMQ_STOP_TIMEOUT=${HERALD_RMQ_STOP_TIMEOUT:-30}

APP_USER=herald
APP_PASSWORD=herald-dev
APP_DB=herald
AMQP_URL="amqp://$APP_USER:$APP_PASSWORD@127.0.0.1:$RMQ_PORT/%2f"
# The TLS listener's certificate names localhost only (see rmq_write_tls).
AMQPS_URL="amqps://$APP_USER:$APP_PASSWORD@localhost:$RMQ_TLS_PORT/%2f"
DATABASE_URL="postgres://$APP_USER:$APP_PASSWORD@127.0.0.1:$PG_PORT/$APP_DB"

# PostgreSQL refuses to run as root; when we are root it runs as this user.
# (RabbitMQ runs as root then: fine for a loopback-only dev node.)
SERVICE_USER=herald-dev

APT_PACKAGES=(rabbitmq-server postgresql librabbitmq-dev libnghttp2-dev libssl-dev python3-venv
    nghttp2-client nginx-light openssl pkg-config)

# --- helpers -----------------------------------------------------------------

log() { printf 'services: %s\n' "$*" >&2; }
die() {
    printf 'services: error: %s\n' "$*" >&2
    exit 1
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Seconds since the epoch with sub-second precision, for bounded waits/timing.
now() { date +%s.%N; }
elapsed_since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }
deadline_passed() { awk -v d="$1" -v n="$(now)" 'BEGIN { exit !(n >= d) }'; }
deadline_in() { awk -v s="$1" -v n="$(now)" 'BEGIN { printf "%.3f", n + s }'; }

# True if the process exists and is not a zombie (kill -0 succeeds on zombies).
proc_alive() {
    local pid=$1 stat
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# True if something accepts TCP connections on 127.0.0.1:$1. Uses bash's
# /dev/tcp so we need neither nc nor ss on a bare machine.
tcp_open() {
    # shellcheck disable=SC2016 # $1 is expanded by the inner bash
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# Relay a tool's output to stderr with our prefix (pipe its 2>&1 into this).
prefixed() { sed -u "s/^/services: $1: /" >&2; }

log_tail() {
    local f=$1
    if [ -s "$f" ]; then
        printf 'services: ---- last lines of %s ----\n' "$f" >&2
        tail -n "${2:-30}" "$f" | sed 's/^/    /' >&2
        printf 'services: ----\n' >&2
    fi
}

# Close every fd above 2 in the current (sub)shell. Used right before starting
# a daemon: otherwise it inherits our lock fd (and blocks every later caller)
# or a caller's pipe (e.g. `make test | tee`, a test harness reading our
# output until EOF) and keeps it open forever.
close_extra_fds() {
    local fd
    for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        if [[ $fd =~ ^[0-9]+$ ]] && [ "$fd" -gt 2 ]; then
            eval "exec $fd>&-" 2>/dev/null || true
        fi
    done
}

# Serialise mutating commands (two `make test` at once, tests restarting the
# broker while another `up` runs). The lock is fd 9; see close_extra_fds.
take_lock() {
    mkdir -p "$STATE_DIR"
    exec 9>"$LOCK_FILE"
    if ! flock -w 300 9; then
        die "another services.sh is holding $LOCK_FILE for more than 300s"
    fi
}

# --- packages ----------------------------------------------------------------

ensure_packages() {
    local missing=() p
    for p in "${APT_PACKAGES[@]}"; do
        if [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" != "ii " ]; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0

    local sudo=()
    if ! is_root; then
        command -v sudo >/dev/null 2>&1 || die "missing packages (${missing[*]}) and not root; install them or run as root"
        sudo=(sudo -n)
    fi
    mkdir -p "$LOG_DIR"
    local apt_log=$LOG_DIR/apt.log start
    start=$(now)
    log "installing missing packages: ${missing[*]} (log: $apt_log)"
    # Installing rabbitmq-server/postgresql may auto-start the *system*
    # instances (ports 5672/5432). Harmless, we never use them, but they must
    # not inherit our lock or the caller's stdout pipe: hence the subshell
    # with closed fds and output to a log file.
    # One `apt-get update` per install run; noninteractive; keep config files.
    if ! (
        close_extra_fds
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
    ) </dev/null >"$apt_log" 2>&1; then
        log_tail "$apt_log" 40
        die "installing ${missing[*]} failed (log: $apt_log)"
    fi
    log "packages installed ($(elapsed_since "$start")s)"
}

# --- service user (root only) ------------------------------------------------

ensure_service_user() {
    is_root || return 0
    if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
        log "creating system user $SERVICE_USER (PostgreSQL refuses to run as root)"
        useradd --system --user-group --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin "$SERVICE_USER" ||
            id -u "$SERVICE_USER" >/dev/null 2>&1 || die "could not create user $SERVICE_USER"
    fi
}

# Run a command as the unprivileged service user when root, else as ourselves.
# cd into a directory that user can enter, or initdb/pg_ctl warn about cwd.
as_service_user() {
    if is_root; then
        (cd "$PG_DIR" && runuser -u "$SERVICE_USER" -- "$@")
    else
        "$@"
    fi
}

# The service user must be able to traverse every ancestor of $PG_DIR (a
# checkout under /root is mode 700). Grant search (x) only, never read.
ensure_traversable() {
    is_root || return 0
    runuser -u "$SERVICE_USER" -- test -x "$PG_DIR" 2>/dev/null && return 0
    # Walk top-down so each check only depends on ancestors already fixed.
    local d="" part
    local -a parts
    IFS=/ read -r -a parts <<<"${PG_DIR#/}"
    for part in "${parts[@]}"; do
        d=$d/$part
        if ! runuser -u "$SERVICE_USER" -- test -x "$d" 2>/dev/null; then
            log "granting search permission (o+x) on $d so $SERVICE_USER can reach $PG_DIR"
            chmod o+x "$d"
        fi
    done
    runuser -u "$SERVICE_USER" -- test -x "$PG_DIR" ||
        die "$SERVICE_USER still cannot reach $PG_DIR (ACLs or mount options?)"
}

# --- PostgreSQL --------------------------------------------------------------

pg_find_bin() {
    # Highest installed major version, e.g. /usr/lib/postgresql/15/bin.
    PG_BIN=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/pg_ctl" ]; then
        die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (is postgresql installed?)"
    fi
    PG_MAJOR=$(basename -- "$(dirname -- "$PG_BIN")")
}

# The unix socket path must fit in sun_path (107 bytes). Keep it inside .state
# when it fits; for very deep checkouts fall back to a per-repo dir in /tmp.
pg_socket_dir() {
    local d=$PG_DIR/run
    if [ $((${#d} + ${#PG_PORT} + 10)) -gt 100 ]; then
        d=/tmp/herald-dev-pg-$(printf '%s' "$REPO_ROOT" | cksum | cut -d' ' -f1)
    fi
    printf '%s\n' "$d"
}

# Our postmaster is running iff postmaster.pid names a live process whose
# command line mentions our data dir (guards against pid reuse after kill -9).
pg_running() {
    local pid
    [ -f "$PG_DATA/postmaster.pid" ] || return 1
    pid=$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 1
    proc_alive "$pid" || return 1
    # (Read into a variable first: `grep -q` in a pipe + pipefail can SIGPIPE.)
    local args
    args=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null) || return 1
    grep -qxF -- "$PG_DATA" <<<"$args"
}

# After `kill -9`, postmaster.pid and the socket lock file still name the dead
# postmaster. Postgres copes with a pid that is gone (and then also checks for
# orphaned backends), so normally we leave them alone. Two cases make it
# refuse to start, and we handle them here:
#  - the killed postmaster is still an unreaped zombie (kill(pid, 0) succeeds
#    on zombies): wait briefly until it's reaped;
#  - the pid was reused by an unrelated process: remove the stale lock file.
pg_clear_stale_locks() {
    local sock=$1 f pid deadline
    for f in "$PG_DATA/postmaster.pid" "$sock/.s.PGSQL.$PG_PORT.lock"; do
        [ -f "$f" ] || continue
        pid=$(head -n 1 "$f" 2>/dev/null || true)
        pid=${pid#-}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        deadline=$(deadline_in 10)
        while [ -e "/proc/$pid" ] && ! proc_alive "$pid" && ! deadline_passed "$deadline"; do
            sleep 0.1
        done
        if [ -e "/proc/$pid" ]; then
            log "removing stale $f (pid $pid is not our postmaster)"
            rm -f -- "$f"
        fi
    done
}

# PostgreSQL serves TLS too (for the sslmode tests) with the broker's dev certificate: "localhost" only, signed
# by the dev CA (rmq_write_tls). The server wants its key owned by its own user and not readable by others.
pg_write_tls() {
    rmq_write_tls
    install -m 0644 "$RMQ_TLS_DIR/server.pem" "$PG_DATA/herald-tls.pem"
    install -m 0600 "$RMQ_TLS_DIR/server.key" "$PG_DATA/herald-tls.key"
    if is_root; then chown "$SERVICE_USER:" "$PG_DATA/herald-tls.pem" "$PG_DATA/herald-tls.key"; fi
}

pg_write_config() {
    local sock=$1
    pg_write_tls
    # Settings we own live in an include file rewritten on every `up`, so
    # changes here apply to existing data dirs too.
    cat >"$PG_DATA/herald-dev.conf" <<EOF
# Written by deploy/dev/services.sh on every 'up'; edits are overwritten.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$sock'
unix_socket_permissions = 0777
max_connections = 200
password_encryption = 'scram-sha-256'
# Throwaway dev/test data: trade crash safety for speed (tests create many DBs).
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_line_prefix = '%m [%p] %q%u@%d '
log_timezone = 'UTC'
timezone = 'UTC'
ssl = on
ssl_cert_file = 'herald-tls.pem'
ssl_key_file = 'herald-tls.key'
EOF
    cat >"$PG_DATA/pg_hba.conf" <<'EOF'
# Written by deploy/dev/services.sh on every 'up'; edits are overwritten.
# TYPE  DATABASE  USER  ADDRESS        METHOD
local   all       all                  trust
host    all       all   127.0.0.1/32   scram-sha-256
EOF
    if ! grep -q "^include_if_exists = 'herald-dev.conf'" "$PG_DATA/postgresql.conf"; then
        printf "\n# Herald dev settings\ninclude_if_exists = 'herald-dev.conf'\n" >>"$PG_DATA/postgresql.conf"
    fi
    if is_root; then chown "$SERVICE_USER:" "$PG_DATA/herald-dev.conf" "$PG_DATA/pg_hba.conf"; fi
}

pg_init() {
    [ -f "$PG_DATA/PG_VERSION" ] && return 0
    # initdb into a scratch dir and rename on success, so an interrupted
    # initdb never leaves a half-initialised data dir that looks valid.
    local tmp=$PG_DIR/data.initdb-tmp
    rm -rf -- "$tmp"
    if [ -e "$PG_DATA" ]; then
        log "removing uninitialised leftover $PG_DATA"
        rm -rf -- "$PG_DATA"
    fi
    log "initialising PostgreSQL $PG_MAJOR data dir in $PG_DATA"
    if ! as_service_user "$PG_BIN/initdb" -D "$tmp" -U "$PG_SUPERUSER" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$LOG_DIR/initdb.log" 2>&1; then
        log_tail "$LOG_DIR/initdb.log"
        die "initdb failed (full log: $LOG_DIR/initdb.log)"
    fi
    mv -- "$tmp" "$PG_DATA"
}

pg_start() {
    pg_find_bin
    ensure_service_user
    mkdir -p "$PG_DIR" "$LOG_DIR"
    local sock
    sock=$(pg_socket_dir)
    mkdir -p "$sock"
    touch "$PG_LOG"
    if is_root; then
        # Only the postgres tree and its log belong to the service user.
        chown "$SERVICE_USER:" "$PG_DIR" "$sock" "$PG_LOG"
        # Recursive chown only when the tree isn't ours yet (e.g. a data dir
        # created by an earlier non-root run); it can be large.
        if [ -d "$PG_DATA" ] && [ "$(stat -c %U "$PG_DATA")" != "$SERVICE_USER" ]; then
            chown -R "$SERVICE_USER:" "$PG_DATA"
        fi
        ensure_traversable
    fi
    chmod 755 "$sock"
    pg_init

    local have
    have=$(cat "$PG_DATA/PG_VERSION")
    [ "$have" = "$PG_MAJOR" ] ||
        die "$PG_DATA was created by PostgreSQL $have but the newest installed is $PG_MAJOR; run 'make clean-state' (dev data is disposable)"

    pg_write_config "$sock"

    if pg_running; then
        log "postgres already running (pid $(head -n 1 "$PG_DATA/postmaster.pid"))"
    else
        pg_clear_stale_locks "$sock"
        if tcp_open "$PG_PORT"; then
            die "port $PG_PORT is in use by another process (another checkout's postgres?)"
        fi
        log "starting postgres on 127.0.0.1:$PG_PORT"
        # pg_ctl daemonises postgres with output to $PG_LOG; the subshell
        # keeps our fds (lock, caller pipes) out of the postmaster.
        if ! (
            close_extra_fds
            as_service_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$PG_START_TIMEOUT" -s start
        ) </dev/null 2>&1 | prefixed postgres; then
            log_tail "$PG_LOG"
            die "postgres failed to start (log: $PG_LOG)"
        fi
    fi

    # pg_ctl -w already waits, but an already-running server may still be in
    # recovery after a crash; wait for both the socket and TCP to answer.
    local deadline
    deadline=$(deadline_in "$PG_START_TIMEOUT")
    # (-U/-d: otherwise each probe logs 'role "root" does not exist'.)
    until "$PG_BIN/pg_isready" -q -h "$sock" -p "$PG_PORT" -U "$PG_SUPERUSER" -d postgres -t 2 &&
        "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U "$APP_USER" -d "$APP_DB" -t 2; do
        if deadline_passed "$deadline"; then
            log_tail "$PG_LOG"
            die "postgres not ready on port $PG_PORT after ${PG_START_TIMEOUT}s (log: $PG_LOG)"
        fi
        sleep 0.2
    done

    pg_provision "$sock"
}

pg_provision() {
    local sock=$1
    # Superuser over the trusted unix socket. ALTER ROLE on every run keeps the
    # password/attributes right even if someone changed them by hand.
    if ! "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$PG_PORT" -U "$PG_SUPERUSER" -d postgres \
        >"$LOG_DIR/pg-provision.log" 2>&1 <<EOF; then
SELECT 'CREATE ROLE $APP_USER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$APP_USER') \gexec
ALTER ROLE $APP_USER WITH LOGIN CREATEDB PASSWORD '$APP_PASSWORD';
SELECT 'CREATE DATABASE $APP_DB OWNER $APP_USER' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$APP_DB') \gexec
EOF
        log_tail "$LOG_DIR/pg-provision.log"
        die "could not create role/database $APP_USER/$APP_DB"
    fi
}

pg_stop() {
    if [ ! -f "$PG_DATA/PG_VERSION" ]; then
        log "postgres: no data dir, nothing to stop"
        return 0
    fi
    if ! pg_running; then
        # A stale postmaster.pid is left for pg_start: postgres uses it to
        # detect orphaned backends of a killed postmaster.
        log "postgres already stopped"
        return 0
    fi
    pg_find_bin
    log "stopping postgres"
    if ! as_service_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 -s stop 2>&1 | prefixed postgres; then
        log "fast shutdown timed out; using immediate shutdown"
        as_service_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 30 -s stop 2>&1 | prefixed postgres ||
            die "could not stop postgres (log: $PG_LOG)"
    fi
}

pg_status() {
    if pg_running; then
        echo "postgres: running (pid $(head -n 1 "$PG_DATA/postmaster.pid"), 127.0.0.1:$PG_PORT)"
    else
        echo "postgres: stopped"
        return 1
    fi
}

# --- RabbitMQ ----------------------------------------------------------------

# The complete environment for our broker and its CLI. `env -i` drops the
# caller's environment so stray RABBITMQ_*/ERL_* variables (or the system
# /etc/rabbitmq files, which are redirected below) cannot change our node.
RMQ_ENV=(
    HOME="$RMQ_DIR" # Erlang cookie: $RMQ_DIR/.erlang.cookie
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    LANG=C.UTF-8 LC_ALL=C.UTF-8 # the Elixir CLI warns on non-UTF-8 locales
    RABBITMQ_NODENAME="$RMQ_NODENAME"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    RABBITMQ_NODE_PORT="$RMQ_PORT"
    RABBITMQ_DIST_PORT="$RMQ_DIST_PORT"
    RABBITMQ_CTL_DIST_PORT_MIN="$RMQ_CTL_DIST_PORT_MIN"
    RABBITMQ_CTL_DIST_PORT_MAX="$RMQ_CTL_DIST_PORT_MAX"
    ERL_EPMD_PORT="$RMQ_EPMD_PORT"
    ERL_EPMD_ADDRESS=127.0.0.1
    # Erlang distribution listener on loopback only. The broker shares this machine's cores with PostgreSQL,
    # the workers and the sink, so its schedulers sleep when idle instead of spinning (RabbitMQ's runtime guide:
    # busy waiting only pays on hosts where the node has the CPU to itself).
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} +sbwt none +sbwtdcpu none +sbwtdio none"
    RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia"
    RABBITMQ_LOG_BASE="$RMQ_DIR/log"
    RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq.conf"
    RABBITMQ_CONFIG_FILES="$RMQ_DIR/conf.d"
    RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ_DIR/advanced.config"
    RABBITMQ_CONF_ENV_FILE="$RMQ_DIR/rabbitmq-env.conf"
    RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins"
    RABBITMQ_PID_FILE="$RMQ_PID_FILE"
    RABBITMQ_MOTD_FILE="$RMQ_DIR/motd"
)

rmqctl() {
    env -i "${RMQ_ENV[@]}" "$RMQ_BIN/rabbitmqctl" -n "$RMQ_NODENAME" "$@"
}

rmq_pid() { head -n 1 "$RMQ_PID_FILE" 2>/dev/null; }

# Our broker is running iff the pid file names a live process whose
# environment carries our mnesia base (guards against pid reuse).
rmq_running() {
    local pid
    pid=$(rmq_pid) || return 1
    proc_alive "$pid" || return 1
    local environ
    environ=$({ tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null) || return 1
    grep -qxF -- "RABBITMQ_MNESIA_BASE=$RMQ_DIR/mnesia" <<<"$environ"
}

rmq_write_config() {
    mkdir -p "$RMQ_DIR/mnesia" "$RMQ_DIR/log" "$RMQ_DIR/conf.d" "$LOG_DIR"
    # Rewritten on every start so edits here apply to existing state.
    cat >"$RMQ_DIR/rabbitmq.conf" <<'EOF'
# Written by deploy/dev/services.sh on every start; edits are overwritten.
# Listener address/port, node name and dist port come from the environment.
log.console = false
log.file.level = info
# Dev machines can be low on disk; don't block publishers below the default.
disk_free_limit.absolute = 50MB
EOF
    # amqps on loopback with the dev CA's certificate; clients need no certificate of their own.
    cat >>"$RMQ_DIR/rabbitmq.conf" <<EOF
listeners.ssl.1 = 127.0.0.1:$RMQ_TLS_PORT
ssl_options.cacertfile = $RMQ_TLS_DIR/ca.pem
ssl_options.certfile = $RMQ_TLS_DIR/server.pem
ssl_options.keyfile = $RMQ_TLS_DIR/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
EOF
    # No plugins: fastest boot. (Management would go on 127.0.0.1:56722.)
    printf '[].\n' >"$RMQ_DIR/enabled_plugins"
    # Make .state/logs the one place to look for logs.
    ln -sfn ../rabbitmq/log "$LOG_DIR/rabbitmq"
}

# A throwaway dev CA, the broker's certificate signed by it for DNS name "localhost" only (so that a client
# connecting to 127.0.0.1 sees host-name verification fail), and a second CA that signed nothing (a client
# trusting only it sees chain verification fail). Made once and kept with the state; the keys stay 0600.
rmq_write_tls() {
    local dir=$RMQ_TLS_DIR
    if [ -s "$dir/server.pem" ] && [ -s "$dir/server.key" ] && [ -s "$dir/other-ca.pem" ]; then
        return 0
    fi
    command -v openssl >/dev/null 2>&1 || die "openssl not found (it is in APT_PACKAGES)"
    rm -rf -- "$dir"
    mkdir -p "$dir" "$LOG_DIR"
    if ! (
        set -e
        umask 077
        cd "$dir"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
            -subj "/CN=Herald dev CA" -keyout ca.key -out ca.pem
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
            -keyout server.key -out server.csr
        printf '%s\n' "subjectAltName=DNS:localhost" "basicConstraints=CA:FALSE" \
            "keyUsage=digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
            -extfile server.ext -out server.pem
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
            -subj "/CN=Herald dev other CA" -keyout other-ca.key -out other-ca.pem
        rm -f server.csr server.ext ca.srl other-ca.key
        chmod 0644 ca.pem server.pem other-ca.pem
    ) >"$LOG_DIR/openssl.log" 2>&1; then
        log_tail "$LOG_DIR/openssl.log"
        die "could not make the dev TLS certificates (log: $LOG_DIR/openssl.log)"
    fi
    log "made the dev CA and the broker's TLS certificate in ${dir#"$REPO_ROOT"/}"
}

# Wait until our broker accepts AMQP connections and has finished booting.
# $1 = pid of the process we just launched (optional).
rmq_wait_ready() {
    local launched=${1:-} deadline start
    start=$(now)
    deadline=$(deadline_in "$RMQ_START_TIMEOUT")
    until tcp_open "$RMQ_PORT"; do
        if [ -n "$launched" ] && ! proc_alive "$launched"; then
            log_tail "$RMQ_OUT_LOG"
            log_tail "$RMQ_DIR/log/$RMQ_NODENAME.log"
            die "rabbitmq exited during startup (logs: $RMQ_OUT_LOG, $RMQ_DIR/log/)"
        fi
        if deadline_passed "$deadline"; then
            log_tail "$RMQ_DIR/log/$RMQ_NODENAME.log"
            die "rabbitmq not accepting connections on 127.0.0.1:$RMQ_PORT after ${RMQ_START_TIMEOUT}s (logs: $RMQ_DIR/log/)"
        fi
        sleep 0.25
    done
    # Listeners open late in boot; await_startup confirms boot completed.
    if ! rmqctl -q await_startup --timeout "$RMQ_START_TIMEOUT" >/dev/null 2>"$LOG_DIR/rabbitmqctl.err"; then
        log_tail "$LOG_DIR/rabbitmqctl.err"
        log_tail "$RMQ_DIR/log/$RMQ_NODENAME.log"
        die "rabbitmq did not finish booting"
    fi
    if ! tcp_open "$RMQ_TLS_PORT"; then
        log_tail "$RMQ_DIR/log/$RMQ_NODENAME.log"
        die "rabbitmq booted without its amqps listener on 127.0.0.1:$RMQ_TLS_PORT (logs: $RMQ_DIR/log/)"
    fi
    log "rabbitmq ready on 127.0.0.1:$RMQ_PORT, amqps on $RMQ_TLS_PORT ($(elapsed_since "$start")s)"
}

rmq_launch() {
    [ -x "$RMQ_BIN/rabbitmq-server" ] || die "$RMQ_BIN/rabbitmq-server not found (is rabbitmq-server installed?)"
    rmq_write_tls
    rmq_write_config
    if [ -f "$RMQ_PID_FILE" ]; then
        log "removing stale $RMQ_PID_FILE"
        rm -f -- "$RMQ_PID_FILE"
    fi
    local p
    for p in "$RMQ_PORT" "$RMQ_DIST_PORT" "$RMQ_TLS_PORT"; do
        if tcp_open "$p"; then
            die "port $p is in use by another process (another checkout's broker?)"
        fi
    done
    log "starting rabbitmq node $RMQ_NODENAME on 127.0.0.1:$RMQ_PORT"
    printf '\n==== %s starting %s\n' "$(date -u +%FT%TZ)" "$RMQ_NODENAME" >>"$RMQ_OUT_LOG"
    # Root is fine for a dev Erlang node. setsid detaches it from our session
    # and terminal, so Ctrl-C in `make` or the end of a CI step doesn't kill
    # it; stdio goes to a log and other fds are closed so nothing waits on our
    # pipes. `setsid -w` makes $! stay alive exactly as long as the broker,
    # whether or not setsid had to fork.
    (
        cd "$RMQ_DIR"
        close_extra_fds
        exec setsid -w env -i "${RMQ_ENV[@]}" "$RMQ_BIN/rabbitmq-server"
    ) </dev/null >>"$RMQ_OUT_LOG" 2>&1 &
    local launched=$!
    disown "$launched" 2>/dev/null || true
    rmq_wait_ready "$launched"
}

rmq_provision() {
    # One CLI call in the common (already provisioned) case.
    local perms
    if perms=$(rmqctl -q list_user_permissions "$APP_USER" 2>/dev/null) &&
        grep -qE '^/[[:space:]]+\.\*[[:space:]]+\.\*[[:space:]]+\.\*$' <<<"$perms"; then
        return 0
    fi
    log "provisioning rabbitmq user $APP_USER on vhost /"
    {
        rmqctl -q add_user "$APP_USER" "$APP_PASSWORD" ||
            rmqctl -q change_password "$APP_USER" "$APP_PASSWORD"
        rmqctl -q set_permissions -p / "$APP_USER" '.*' '.*' '.*'
    } >"$LOG_DIR/rabbitmq-provision.log" 2>&1 || {
        log_tail "$LOG_DIR/rabbitmq-provision.log"
        die "could not provision rabbitmq user $APP_USER"
    }
}

rmq_start() {
    if rmq_running; then
        if tcp_open "$RMQ_PORT" && ! tcp_open "$RMQ_TLS_PORT"; then
            # Started by an older version of this script, before the amqps listener.
            log "rabbitmq running (pid $(rmq_pid)) without its amqps listener; restarting it"
            rmq_stop
            rmq_launch
        elif tcp_open "$RMQ_PORT"; then
            log "rabbitmq already running (pid $(rmq_pid))"
        else
            log "rabbitmq running (pid $(rmq_pid)) but not accepting connections yet; waiting"
            rmq_wait_ready "$(rmq_pid)"
        fi
    else
        rmq_launch
    fi
    rmq_provision
}

rmq_stop() {
    if ! rmq_running; then
        rm -f -- "$RMQ_PID_FILE"
        log "rabbitmq already stopped"
        return 0
    fi
    local pid start deadline
    pid=$(rmq_pid)
    start=$(now)
    log "stopping rabbitmq (pid $pid)"
    # Graceful stop through the CLI; bounded so a wedged node can't hang us.
    timeout "$RMQ_STOP_TIMEOUT" env -i "${RMQ_ENV[@]}" "$RMQ_BIN/rabbitmqctl" -n "$RMQ_NODENAME" -q \
        stop >"$LOG_DIR/rabbitmqctl.err" 2>&1 ||
        log "rabbitmqctl stop failed; falling back to signals"
    deadline=$(deadline_in "$RMQ_STOP_TIMEOUT")
    while proc_alive "$pid"; do
        if deadline_passed "$deadline"; then
            log "rabbitmq still alive after ${RMQ_STOP_TIMEOUT}s; sending SIGTERM, then SIGKILL"
            kill -TERM "$pid" 2>/dev/null || true
            sleep 5
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
            break
        fi
        sleep 0.1
    done
    proc_alive "$pid" && die "could not stop rabbitmq (pid $pid)"
    rm -f -- "$RMQ_PID_FILE"
    log "rabbitmq stopped ($(elapsed_since "$start")s)"
}

# epmd is started on demand by the broker (on our private port) and outlives
# it; `down` stops it so nothing of ours stays listening.
epmd_stop() {
    command -v epmd >/dev/null 2>&1 || return 0
    if ERL_EPMD_PORT=$RMQ_EPMD_PORT epmd -names >/dev/null 2>&1; then
        ERL_EPMD_PORT=$RMQ_EPMD_PORT epmd -kill >/dev/null 2>&1 || true
    fi
}

rmq_status() {
    if rmq_running; then
        if tcp_open "$RMQ_PORT"; then
            echo "rabbitmq: running (pid $(rmq_pid), 127.0.0.1:$RMQ_PORT)"
        else
            echo "rabbitmq: starting (pid $(rmq_pid), port $RMQ_PORT not accepting yet)"
            return 1
        fi
    else
        echo "rabbitmq: stopped"
        return 1
    fi
}

# --- commands ----------------------------------------------------------------

print_env() {
    printf 'HERALD_AMQP_URL=%s\n' "$AMQP_URL"
    printf 'HERALD_AMQPS_URL=%s\n' "$AMQPS_URL"
    printf 'HERALD_AMQPS_CA_FILE=%s\n' "$RMQ_TLS_DIR/ca.pem"
    printf 'HERALD_AMQPS_OTHER_CA_FILE=%s\n' "$RMQ_TLS_DIR/other-ca.pem"
    printf 'HERALD_DATABASE_URL=%s\n' "$DATABASE_URL"
}

write_env_file() {
    print_env >"$ENV_FILE.tmp"
    mv -f -- "$ENV_FILE.tmp" "$ENV_FILE"
}

# The ports `up` used, for the checkout's later commands (only those chosen by variable: defaults stay defaults).
write_ports_file() {
    local name
    for name in "${PORT_VARIABLES[@]}"; do
        [ -z "${!name:-}" ] || printf '%s=%s\n' "$name" "${!name}"
    done >"$PORTS_FILE.tmp"
    mv -f -- "$PORTS_FILE.tmp" "$PORTS_FILE"
}

cmd_up() {
    local start
    start=$(now)
    take_lock
    ensure_packages
    mkdir -p "$LOG_DIR"
    write_ports_file
    pg_start
    rmq_start
    write_env_file
    log "up in $(elapsed_since "$start")s; env written to ${ENV_FILE#"$REPO_ROOT"/}"
}

cmd_down() {
    take_lock
    rmq_stop
    epmd_stop
    pg_stop
}

cmd_status() {
    local rc=0
    pg_status || rc=1
    rmq_status || rc=1
    return $rc
}

usage() {
    cat <<EOF
usage: ${0##*/} COMMAND

  up                install missing packages, start PostgreSQL and RabbitMQ, provision users
  packages          install missing Debian packages (build libraries and services) only
  down              stop both services (data is kept)
  status            show whether each service runs (exit 1 unless both run)
  env               print HERALD_AMQP_URL, HERALD_AMQPS_URL (+ its CA files) and HERALD_DATABASE_URL (shell-sourceable)
  stop-rabbitmq     stop only the broker (data kept)
  start-rabbitmq    start only the broker; returns once AMQP accepts connections
  restart-rabbitmq  stop-rabbitmq then start-rabbitmq
  stop-postgres     stop only PostgreSQL (data kept; for outage tests)
  start-postgres    start only PostgreSQL; returns once it accepts connections
  rabbitmqctl ARGS  run rabbitmqctl against our node (e.g. list_users, list_queues)
  psql ARGS         psql as superuser '$PG_SUPERUSER' on our server (database $APP_DB)

State: $STATE_DIR
EOF
}

main() {
    local cmd=${1:-}
    case $cmd in
        up) cmd_up ;;
        packages)
            take_lock
            ensure_packages
            ;;
        down) cmd_down ;;
        status) cmd_status ;;
        env) print_env ;;
        stop-rabbitmq)
            take_lock
            rmq_stop
            ;;
        start-rabbitmq)
            take_lock
            rmq_start
            ;;
        restart-rabbitmq)
            take_lock
            rmq_stop
            rmq_start
            ;;
        stop-postgres)
            take_lock
            pg_stop
            ;;
        start-postgres)
            take_lock
            pg_start
            ;;
        rabbitmqctl)
            shift
            rmqctl "$@"
            ;;
        psql)
            shift
            pg_find_bin
            exec "$PG_BIN/psql" -X -h "$(pg_socket_dir)" -p "$PG_PORT" -U "$PG_SUPERUSER" -d "$APP_DB" "$@"
            ;;
        -h | --help | help) usage ;;
        *)
            usage >&2
            die "unknown command '${cmd}'"
            ;;
    esac
}

main "$@"
