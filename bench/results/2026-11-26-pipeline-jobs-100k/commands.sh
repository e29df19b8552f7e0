#!/bin/bash
# The closing sequences of issue 21 (and issue 18's before/after), run one after another on an otherwise idle machine.
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

# A, B: the client alone, both shapes, 5 rounds
for shape in "1 1000" "4 250"; do
  set -- $shape; C=$1; S=$2
  O=$R/$D-apns-${C}x${S}; mkdir -p $O; : > $O/commit
  for i in 1 2 3 4 5; do
    stamp "round $i" $O
    h2 $C $S 300000 $BODY250 $O/h2load-$i.txt
    for L in m1 c0; do
      for API in batch send; do
        $BIN/herald-$L bench apns --api $API --connections $C --streams $S --count 300000 --json > $O/apns-$L-$API-$i.json 2>/dev/null
      done
    done
  done
done

# C: AMQP, classic and quorum, 3 rounds
O=$R/$D-amqp; mkdir -p $O; : > $O/commit
for i in 1 2 3; do
  stamp "round $i" $O
  for q in classic quorum; do
    /work/benchruns/wt-head/bench/amqp-baseline --amqp-url "$HERALD_AMQP_URL" --count 100000 --size 300 --queue-type $q --json > $O/amqp-c-$q-$i.json 2>/dev/null
    $BIN/herald-m1 bench amqp --count 100000 --size 300 --queue-type $q --json > $O/amqp-m1-$q-$i.json 2>/dev/null
  done
done

# D: 300,000-device broadcast right after its import, one worker, default flags; h2load 1x1000 alongside; 5 rounds
O=$R/$D-pipeline-broadcast-300k; mkdir -p $O; : > $O/commit
for i in 1 2 3 4 5; do
  stamp "round $i" $O
  h2 1 1000 300000 $BODY217 $O/h2load-$i.txt
  for L in m1 c0; do
    fresh; $BIN/herald-$L bench pipeline --scenario broadcast --devices 300000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/broadcast-$L-$i.json 2> $O/broadcast-$L-$i.err
  done
done

# E: 100,000 single-device jobs, current method; C baseline alongside; 3 rounds
O=$R/$D-pipeline-jobs-100k; mkdir -p $O; : > $O/commit
for i in 1 2 3; do
  stamp "round $i" $O
  /work/benchruns/wt-head/bench/amqp-baseline --amqp-url "$HERALD_AMQP_URL" --count 100000 --size 300 --prefetch 200 --confirm-window 1000 --json > $O/amqp-baseline-$i.json 2>/dev/null
  for L in m1 c0; do
    fresh; $BIN/herald-$L bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/jobs-$L-$i.json 2> $O/jobs-$L-$i.err
  done
done

# F: issue 18, before (1482bf4) and after (m1), 1482bf4's bench method built into both; 5 rounds of jobs, 3 of broadcast
O=$R/$D-pipeline-issue-18-close; mkdir -p $O; : > $O/commit
for i in 1 2 3 4 5; do
  stamp "jobs round $i" $O
  for L in 1482bf4 m1old; do
    fresh; $BIN/herald-$L bench pipeline --scenario jobs --devices 100000 --database-url $DB --schemas /work/benchruns/schemas-$L --ca-file $CA --key-file $KEY --json > $O/jobs-$L-$i.json 2> $O/jobs-$L-$i.err
  done
done
for i in 1 2 3; do
  stamp "broadcast round $i" $O
  for L in 1482bf4 m1old; do
    fresh; $BIN/herald-$L bench pipeline --scenario broadcast --devices 300000 --database-url $DB --schemas /work/benchruns/schemas-$L --ca-file $CA --key-file $KEY --json > $O/broadcast-$L-$i.json 2> $O/broadcast-$L-$i.err
  done
done
echo ALL DONE
