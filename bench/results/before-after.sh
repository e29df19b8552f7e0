#!/bin/bash
# Two release builds of herald against each other on the pipeline, alternating in one sequence (the before/after
# sequences of the issues, whose commands.sh run this): ROUNDS rounds of the 100,000 single-device jobs (before,
# then after), then ROUNDS rounds of the 300,000-device broadcast right after its import (after, then before), each
# run on a fresh database, one worker, default flags, the nginx sink (deploy/dev/sink.sh). Run from the repository
# root after `make demo` (the demo CA and key) with the dev services up.
#   OUT             the results directory (the JSON of each run, and `commit`: the binaries and each round's load)
#   BEFORE_BIN      the build before, BEFORE_SCHEMAS its migrations
#   AFTER_BIN       the build after (the repository's schemas)
#   ROUNDS          rounds of each shape (default 3); FIRST the first round's number (default 1: a new `commit`)
#   SCENARIOS       which shapes (default "jobs broadcast")
set -u
set -a; . .state/services.env; set +a
O=${OUT:?set OUT to the results directory}; ROUNDS=${ROUNDS:-3}; FIRST=${FIRST:-1}
SCENARIOS=${SCENARIOS:-jobs broadcast}
CA=.state/demo/ca.pem; KEY=.state/demo/AuthKey_DEMOKEY123.p8
PGURL=${HERALD_DATABASE_URL%/*}
DB=$PGURL/herald_bench_seq
mkdir -p "$O"
fresh() { psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
stamp() { echo "$1 $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$O/commit"; }
run() { # LABEL SCENARIO DEVICES ROUND
  local bin schemas
  if [ "$1" = before ]; then bin=$BEFORE_BIN schemas=$BEFORE_SCHEMAS; else bin=$AFTER_BIN schemas=schemas; fi
  fresh
  "$bin" bench pipeline --scenario "$2" --devices "$3" --confirm-window 1000 --database-url "$DB" --schemas "$schemas" \
    --ca-file $CA --key-file $KEY --json > "$O/$2-$1-$4.json" 2>/dev/null
}
rounds() { seq "$FIRST" $((FIRST + ROUNDS - 1)); }
if [ "$FIRST" = 1 ]; then
  { echo "before: $("$BEFORE_BIN" --version 2>/dev/null || echo "$BEFORE_BIN")"; echo "after: $("$AFTER_BIN" --version)"; } > "$O/commit"
fi
case " $SCENARIOS " in *" jobs "*)
  for i in $(rounds); do stamp "jobs round $i"; run before jobs 100000 $i; run after jobs 100000 $i; done ;;
esac
case " $SCENARIOS " in *" broadcast "*)
  for i in $(rounds); do stamp "broadcast round $i"; run after broadcast 300000 $i; run before broadcast 300000 $i; done ;;
esac
