#!/bin/bash
# Issue 36: what FCM's token length costs. 100,000 single-device jobs at 3793864, one worker, default flags, the
# nginx sink, fresh database per run; per round iOS (64 hex digits), Android with 64-character registration tokens,
# Android with 167-character ones (the length FCM issues today); 4 rounds. OUT: this directory.
set -u
set -a; . .state/services.env; set +a
O=${OUT:?}; PGURL=${HERALD_DATABASE_URL%/*}; BIN=.build/release/herald
fresh() { psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
jobs() { # NAME [flags]
  fresh
  "$BIN" bench pipeline --scenario jobs --devices 100000 "${@:2}" --confirm-window 1000 \
    --database-url "$PGURL/herald_bench_seq" --ca-file .state/demo/ca.pem \
    --key-file .state/demo/AuthKey_DEMOKEY123.p8 --json > "$O/$1.json" 2>/dev/null
}
echo "$("$BIN" --version)" > "$O/commit"
for i in 1 2 3 4; do
  echo "round $i $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$O/commit"
  jobs jobs-ios-$i
  jobs jobs-android64-$i --android 1 --android-token-length 64
  jobs jobs-android167-$i --android 1 --android-token-length 167
done
