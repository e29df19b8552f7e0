#!/bin/bash
# Issues 36 and 35: 100,000 single-device jobs, one worker, default flags, the nginx sink, fresh database per run.
# 3793864 (encoder, acks) iOS and Android (167-character tokens), and 915c265 (OLD_BIN, the build
# before FCM, with its own schemas in OLD_SCHEMAS) iOS, alternating: per round new-ios, new-android, old-ios;
# 5 rounds. OUT: this directory.
set -u
set -a; . .state/services.env; set +a
O=${OUT:?}; PGURL=${HERALD_DATABASE_URL%/*}; NEW_BIN=.build/release/herald
fresh() { psql -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
jobs() { # BIN SCHEMAS NAME [--android 1]
  fresh
  "$1" bench pipeline --scenario jobs --devices 100000 "${@:4}" --confirm-window 1000 --schemas "$2" \
    --database-url "$PGURL/herald_bench_seq" --ca-file .state/demo/ca.pem \
    --key-file .state/demo/AuthKey_DEMOKEY123.p8 --json > "$O/$3.json" 2>/dev/null
}
{ echo "new: $("$NEW_BIN" --version)"; echo "old: $("$OLD_BIN" --version)"; } > "$O/commit"
for i in 1 2 3 4 5; do
  echo "round $i $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$O/commit"
  jobs "$NEW_BIN" schemas jobs-ios-new-$i
  jobs "$NEW_BIN" schemas jobs-android-new-$i --android 1
  jobs "$OLD_BIN" "$OLD_SCHEMAS" jobs-ios-old-$i
done
