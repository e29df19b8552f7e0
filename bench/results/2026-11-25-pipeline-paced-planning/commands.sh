#!/bin/bash
# usage: altflags.sh SCENARIO DEVICES ROUNDS OUTDIR BINLABEL NAME=FLAGS... — one binary, flag sets alternating within
# each round; every run on a freshly created database (herald_bench_alt).
set -u
S=$1; N=$2; R=$3; OUT=$4; L=$5; shift 5; mkdir -p $OUT
cd /work/main
set -a; source .state/services.env; set +a
BIN=/work/benchruns/bin/herald-$L; SCH=/work/benchruns/schemas-$L
for i in $(seq 1 $R); do
  for spec in "$@"; do
    NAME=${spec%%=*}; FLAGS=${spec#*=}
    PGPASSWORD=herald-dev psql -q -h 127.0.0.1 -p 55432 -U herald -d postgres -c "DROP DATABASE IF EXISTS herald_bench_alt" -c "CREATE DATABASE herald_bench_alt" >/dev/null
    $BIN bench pipeline --scenario $S --devices $N $FLAGS \
      --database-url postgres://herald:herald-dev@127.0.0.1:55432/herald_bench_alt --schemas $SCH \
      --ca-file /work/main/.state/demo/ca.pem --key-file /work/main/.state/demo/AuthKey_DEMOKEY123.p8 --json \
      > $OUT/$S-$NAME-$i.json 2> $OUT/$S-$NAME-$i.err
    echo "$S $NAME $i $(grep -o '"notifications_per_second":[0-9.]*' $OUT/$S-$NAME-$i.json) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
# Run on 2026-11-25 with (binary: a release build of the working tree after 504024c, with planning resumed when
# fewer than a window of batches are pending and a 200 ms resume tick, labelled paced2):
#   altflags.sh broadcast 300000 3 OUT paced2 "off=" "on100=--plan-ahead 100" "on50=--plan-ahead 50"
#   altflags.sh jobs 100000 3 OUT paced2 "off=" "on50=--plan-ahead 50"
