#!/bin/bash
# Shared by the commands.sh of the 2026-11-26 sequences (issue 21's close and issue 18's before/after): the paths,
# the fresh database of each pipeline run and the h2load baseline. Each commands.sh sources this and runs its own
# section (A to I, named in its first comment); the sections ran one after another, A first. G to I measured
# Herald's own HPACK encoding (3ce88f8) later the same day.
set -u
cd /work/main; set -a; . .state/services.env; set +a
R=/work/main/bench/results; D=2026-11-26
BIN=/work/benchruns/bin
T=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
BODY250=/work/benchruns/apns/body-250.json; BODY217=/work/benchruns/apns/body-217.json
CA=.state/demo/ca.pem; KEY=.state/demo/AuthKey_DEMOKEY123.p8
fresh() { PGPASSWORD=herald-dev psql -q -h 127.0.0.1 -p 55432 -U herald -d postgres -c "DROP DATABASE IF EXISTS herald_bench_seq" -c "CREATE DATABASE herald_bench_seq" >/dev/null 2>&1; }
DB=postgres://herald:herald-dev@127.0.0.1:55432/herald_bench_seq
h2() { # C S N BODY OUT
  /usr/bin/time -f '%U %S' -o $5.time h2load -n $3 -c $1 -m $2 -t 1 -d $4 -H 'apns-topic: x' https://127.0.0.1:58443/3/device/$T > $5 2>&1; }
stamp() { echo "$1 $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> $2/commit; }
