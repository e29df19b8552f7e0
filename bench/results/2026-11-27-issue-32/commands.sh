#!/bin/bash
# Issue 32's before/after: the build before this round (d6f087b's hot paths; BEFORE_BIN, its schemas in
# BEFORE_SCHEMAS) and after it (AFTER_BIN, the repository's schemas), alternating in one sequence: ROUNDS rounds of
# the 100,000 single-device jobs, then ROUNDS rounds of the 300,000-device broadcast right after its import, each run
# on a fresh database, one worker, default flags, the nginx sink (deploy/dev/sink.sh). Run from the repository root
# after `make demo` (the demo CA and key) with the dev services up:
#   BEFORE_BIN=… BEFORE_SCHEMAS=… AFTER_BIN=… bash bench/results/2026-11-27-issue-32/commands.sh
set -u
set -a; . .state/services.env; set +a
O=bench/results/2026-11-27-issue-32; ROUNDS=${ROUNDS:-3}
CA=.state/demo/ca.pem; KEY=.state/demo/AuthKey_DEMOKEY123.p8
PGURL=${HERALD_DATABASE_URL%/*}
DB=$PGURL/herald_bench_seq
fresh() { psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
stamp() { echo "$1 $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> $O/commit; }
run() { # LABEL SCENARIO DEVICES ROUND
  local bin schemas
  if [ "$1" = before ]; then bin=$BEFORE_BIN schemas=$BEFORE_SCHEMAS; else bin=$AFTER_BIN schemas=schemas; fi
  fresh
  "$bin" bench pipeline --scenario "$2" --devices "$3" --confirm-window 1000 --database-url "$DB" --schemas "$schemas" \
    --ca-file $CA --key-file $KEY --json > $O/$2-$1-$4.json 2> $O/$2-$1-$4.err
}
{ echo "before: $("$BEFORE_BIN" --version 2>/dev/null || echo d6f087b)"; echo "after: $("$AFTER_BIN" --version)"; } > $O/commit
for i in $(seq 1 "$ROUNDS"); do
  stamp "jobs round $i" $O; run before jobs 100000 $i; run after jobs 100000 $i
done
for i in $(seq 1 "$ROUNDS"); do
  stamp "broadcast round $i" $O; run after broadcast 300000 $i; run before broadcast 300000 $i
done
