#!/bin/bash
# Written by bench/check.py (make bench-check), in the order run, from the repository root.
# HERALD_BIN, HERALD_BENCH_BASELINE, HERALD_BENCH_CA, HERALD_BENCH_KEY, HERALD_BENCH_SCHEMAS as its
# usage says; HERALD_AMQP_URL and HERALD_DATABASE_URL from .state/services.env; OUT is this directory;
# BENCH_TMP holds the request bodies; DB is a database bench-check recreates before every pipeline run.
set -eu
set -a; . "${HERALD_SERVICES_ENV:-.state/services.env}"; set +a
: "${HERALD_BIN:=.build/release/herald}" "${HERALD_BENCH_BASELINE:=bench/amqp-baseline}" "${HERALD_BENCH_SCHEMAS:=schemas}"
: "${HERALD_BENCH_CA:=.state/demo/ca.pem}" "${HERALD_BENCH_KEY:=.state/demo/AuthKey_DEMOKEY123.p8}"
OUT=${OUT:-$(dirname "$0")}
BENCH_TMP=${BENCH_TMP:-$(mktemp -d)}
python3 -c 'import json,sys
for n in (250, 217):
    b = {"aps": {"alert": ""}}; b["aps"]["alert"] = "x" * (n - len(json.dumps(b, separators=(",", ":"))))
    open(sys.argv[1] + f"/body-{n}.json", "w").write(json.dumps(b, separators=(",", ":")))' "$BENCH_TMP"
DB=${HERALD_DATABASE_URL%/*}/herald_bench_check
mkdir -p "$OUT/apns/1x1000"
/usr/bin/time -f '%U %S' -o "$OUT/apns/1x1000/h2load-1.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/1x1000/h2load-1.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 1 --streams 1000 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/1x1000/apns-check-batch-1.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/1x1000/h2load-2.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/1x1000/h2load-2.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 1 --streams 1000 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/1x1000/apns-check-batch-2.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/1x1000/h2load-3.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/1x1000/h2load-3.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 1 --streams 1000 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/1x1000/apns-check-batch-3.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/1x1000/h2load-4.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/1x1000/h2load-4.txt" 2>/dev/null
mkdir -p "$OUT/apns/4x250"
/usr/bin/time -f '%U %S' -o "$OUT/apns/4x250/h2load-1.txt.time" h2load -n 300000 -c 4 -m 250 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/4x250/h2load-1.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 4 --streams 250 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/4x250/apns-check-batch-1.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/4x250/h2load-2.txt.time" h2load -n 300000 -c 4 -m 250 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/4x250/h2load-2.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 4 --streams 250 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/4x250/apns-check-batch-2.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/4x250/h2load-3.txt.time" h2load -n 300000 -c 4 -m 250 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/4x250/h2load-3.txt" 2>/dev/null
"${HERALD_BIN}" bench apns --api batch --connections 4 --streams 250 --count 300000 --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/apns/4x250/apns-check-batch-3.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/apns/4x250/h2load-4.txt.time" h2load -n 300000 -c 4 -m 250 -t 1 -d "${BENCH_TMP}/body-250.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/apns/4x250/h2load-4.txt" 2>/dev/null
mkdir -p "$OUT/amqp"
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-c-classic-1.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-check-classic-1.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-c-classic-2.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-check-classic-2.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-c-classic-3.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-check-classic-3.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type classic --prefetch 1000 --json > "$OUT/amqp/amqp-c-classic-4.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-c-quorum-1.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-check-quorum-1.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-c-quorum-2.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-check-quorum-2.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-c-quorum-3.json" 2>/dev/null
"${HERALD_BIN}" bench amqp --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-check-quorum-3.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --queue-type quorum --prefetch 1000 --json > "$OUT/amqp/amqp-c-quorum-4.json" 2>/dev/null
mkdir -p "$OUT/broadcast"
/usr/bin/time -f '%U %S' -o "$OUT/broadcast/h2load-1.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-217.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/broadcast/h2load-1.txt" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario broadcast --devices 300000 --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/broadcast/broadcast-check-1.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/broadcast/h2load-2.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-217.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/broadcast/h2load-2.txt" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario broadcast --devices 300000 --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/broadcast/broadcast-check-2.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/broadcast/h2load-3.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-217.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/broadcast/h2load-3.txt" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario broadcast --devices 300000 --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/broadcast/broadcast-check-3.json" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$OUT/broadcast/h2load-4.txt.time" h2load -n 300000 -c 1 -m 1000 -t 1 -d "${BENCH_TMP}/body-217.json" -H 'apns-topic: x' https://127.0.0.1:58443/3/device/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef > "$OUT/broadcast/h2load-4.txt" 2>/dev/null
mkdir -p "$OUT/jobs"
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --confirm-window 1000 --json > "$OUT/jobs/amqp-baseline-1.json" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --amqp-url "${HERALD_AMQP_URL}" --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/jobs/jobs-check-1.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --confirm-window 1000 --json > "$OUT/jobs/amqp-baseline-2.json" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --amqp-url "${HERALD_AMQP_URL}" --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/jobs/jobs-check-2.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --confirm-window 1000 --json > "$OUT/jobs/amqp-baseline-3.json" 2>/dev/null
psql -q "${HERALD_DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS herald_bench_check" -c "CREATE DATABASE herald_bench_check" >/dev/null
"${HERALD_BIN}" bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --amqp-url "${HERALD_AMQP_URL}" --database-url "${DB}" --schemas "${HERALD_BENCH_SCHEMAS}" --endpoint https://127.0.0.1:58443 --ca-file "${HERALD_BENCH_CA}" --key-file "${HERALD_BENCH_KEY}" --json > "$OUT/jobs/jobs-check-3.json" 2>/dev/null
"${HERALD_BENCH_BASELINE}" --amqp-url "${HERALD_AMQP_URL}" --count 100000 --size 300 --confirm-window 1000 --json > "$OUT/jobs/amqp-baseline-4.json" 2>/dev/null
