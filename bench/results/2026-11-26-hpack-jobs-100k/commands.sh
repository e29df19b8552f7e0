#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# I: 100,000 single-device jobs; C baseline alongside; 3 rounds
O=$R/$D-hpack-jobs-100k; mkdir -p $O; : > $O/commit
for i in 1 2 3; do
  stamp "round $i" $O
  /work/benchruns/wt-head/bench/amqp-baseline --amqp-url "$HERALD_AMQP_URL" --count 100000 --size 300 --prefetch 200 --confirm-window 1000 --json > $O/amqp-baseline-$i.json 2>/dev/null
  for L in h1 m7; do
    fresh; $BIN/herald-$L bench pipeline --scenario jobs --devices 100000 --confirm-window 1000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/jobs-$L-$i.json 2> $O/jobs-$L-$i.err
  done
done
