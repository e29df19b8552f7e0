#!/bin/bash
# usage: altn.sh SCENARIO DEVICES ROUNDS OUTDIR LABEL... — each label's binary is /work/benchruns/bin/herald-LABEL with
# /work/benchruns/schemas-LABEL; every run on a freshly created database (herald_bench_alt); labels alternate within
# each round. (The same sequence as bench/results/2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh.)
set -u
S=$1; N=$2; R=$3; OUT=$4; shift 4; mkdir -p $OUT
cd /work/main
set -a; source .state/services.env; set +a
for i in $(seq 1 $R); do
  for L in "$@"; do
    BIN=/work/benchruns/bin/herald-$L; SCH=/work/benchruns/schemas-$L
    PGPASSWORD=herald-dev psql -q -h 127.0.0.1 -p 55432 -U herald -d postgres -c "DROP DATABASE IF EXISTS herald_bench_alt" -c "CREATE DATABASE herald_bench_alt" >/dev/null
    $BIN bench pipeline --scenario $S --devices $N \
      --database-url postgres://herald:herald-dev@127.0.0.1:55432/herald_bench_alt --schemas $SCH \
      --ca-file /work/main/.state/demo/ca.pem --key-file /work/main/.state/demo/AuthKey_DEMOKEY123.p8 --json \
      > $OUT/$S-$L-$i.json 2> $OUT/$S-$L-$i.err
    echo "$S $L $i $(grep -o '"notifications_per_second":[0-9.]*' $OUT/$S-$L-$i.json) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
