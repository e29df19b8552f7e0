#!/bin/bash
# The loops of the 2026-11-26 sequences, sourced by their commands.sh (run from the repository root, after
# `make demo` and `make bench`, with the dev services up and the sink running: deploy/dev/sink.sh start).
#   HERALD_BINS   a directory holding one release herald per label, named herald-<label> (the labels are in each
#                 sequence's `commit` file); the binaries were built from the commits named there.
#   BENCH_TMP     scratch directory for the request bodies (default: a new mktemp -d)
# h2load's bodies are JSON objects of 250 bytes (`herald bench apns`'s default payload size) and 217 bytes (a
# broadcast's payload), made here; only their sizes were recorded when these sequences ran.
set -u
set -a; . .state/services.env; set +a
BIN=${HERALD_BINS:?set HERALD_BINS to the directory of the herald-<label> binaries}
BENCH_TMP=${BENCH_TMP:-$(mktemp -d)}
CA=.state/demo/ca.pem; KEY=.state/demo/AuthKey_DEMOKEY123.p8
T=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
body() { python3 -c 'import json,sys; n=int(sys.argv[1]); b={"aps":{"alert":""}}; b["aps"]["alert"]="x"*(n-len(json.dumps(b,separators=(",",":")))); sys.stdout.write(json.dumps(b,separators=(",",":")))' "$1" > "$2"; }
BODY250=$BENCH_TMP/body-250.json; BODY217=$BENCH_TMP/body-217.json
body 250 "$BODY250"; body 217 "$BODY217"
PGURL=${HERALD_DATABASE_URL%/*}
DB=$PGURL/herald_bench_seq
fresh() { psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
h2() { # C S N BODY OUT
  /usr/bin/time -f '%U %S' -o $5.time h2load -n $3 -c $1 -m $2 -t 1 -d $4 -H 'apns-topic: x' https://127.0.0.1:58443/3/device/$T > $5 2>&1; }
stamp() { echo "$1 $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> $2/commit; }

# ROUNDS rounds of h2load 1x1000 and each label's 300,000-device broadcast right after its import, one worker, default
# flags, each on a fresh database.
broadcasts() { # OUT ROUNDS LABEL...
  local O=$1 n=$2 i L; shift 2; mkdir -p $O; : > $O/commit
  for i in $(seq 1 $n); do
    stamp "round $i" $O
    h2 1 1000 300000 $BODY217 $O/h2load-$i.txt
    for L in "$@"; do
      fresh; $BIN/herald-$L bench pipeline --scenario broadcast --devices 300000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/broadcast-$L-$i.json 2>/dev/null
    done
  done
}

# ROUNDS rounds of the C baseline and each label's 100,000 single-device jobs, each on a fresh database.
single_jobs() { # OUT ROUNDS LABEL...
  local O=$1 n=$2 i L; shift 2; mkdir -p $O; : > $O/commit
  for i in $(seq 1 $n); do
    stamp "round $i" $O
    bench/amqp-baseline --amqp-url "$HERALD_AMQP_URL" --count 100000 --size 300 --prefetch 200 --confirm-window 1000 --json > $O/amqp-baseline-$i.json 2>/dev/null
    for L in "$@"; do
      fresh; $BIN/herald-$L bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/jobs-$L-$i.json 2>/dev/null
    done
  done
}

# ROUNDS rounds per shape (1x1000, then 4x250) of h2load and each label's `bench apns --api batch`, plus the first
# label's `--api send`; one subdirectory per shape.
apns_rounds() { # OUT ROUNDS LABEL...
  local O=$1 n=$2 shape C S i L; shift 2; mkdir -p $O; : > $O/commit
  for shape in "1 1000" "4 250"; do
    set -- $shape "${@}"; C=$1; S=$2; shift 2; mkdir -p $O/${C}x${S}
    for i in $(seq 1 $n); do
      stamp "${C}x${S} round $i" $O
      h2 $C $S 300000 $BODY250 $O/${C}x${S}/h2load-$i.txt
      for L in "$@"; do
        $BIN/herald-$L bench apns --api batch --connections $C --streams $S --count 300000 --json > $O/${C}x${S}/apns-$L-batch-$i.json 2>/dev/null
      done
      $BIN/herald-$1 bench apns --api send --connections $C --streams $S --count 300000 --json > $O/${C}x${S}/apns-$1-send-$i.json 2>/dev/null
    done
  done
}

# ROUNDS rounds of one shape from round FIRST on, each h2load then every label's `bench apns --api batch`: in the
# order given in odd rounds, reversed in even ones.
apns_alternating() { # OUT SHAPE FIRST ROUNDS LABEL...
  local O=$1 shape=$2 first=$3 n=$4 C S i L order; shift 4; C=${shape%x*}; S=${shape#*x}; mkdir -p $O/$shape
  for i in $(seq $first $((first + n - 1))); do
    stamp "$shape round $i" $O
    h2 $C $S 300000 $BODY250 $O/$shape/h2load-$i.txt
    order="$*"; [ $((i % 2)) = 0 ] && order=$(printf '%s\n' "$@" | tac | tr '\n' ' ')
    for L in $order; do
      $BIN/herald-$L bench apns --api batch --connections $C --streams $S --count 300000 --json > $O/$shape/apns-$L-batch-$i.json 2>/dev/null
    done
  done
}
