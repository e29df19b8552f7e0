#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# C: AMQP, classic and quorum, 3 rounds
O=$R/$D-amqp; mkdir -p $O; : > $O/commit
for i in 1 2 3; do
  stamp "round $i" $O
  for q in classic quorum; do
    /work/benchruns/wt-head/bench/amqp-baseline --amqp-url "$HERALD_AMQP_URL" --count 100000 --size 300 --queue-type $q --json > $O/amqp-c-$q-$i.json 2>/dev/null
    $BIN/herald-m1 bench amqp --count 100000 --size 300 --queue-type $q --json > $O/amqp-m1-$q-$i.json 2>/dev/null
  done
done
