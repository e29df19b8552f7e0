#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# H: 300,000-device broadcast right after its import, one worker, default flags; h2load 1x1000 alongside; 5 rounds
O=$R/$D-hpack-broadcast-300k; mkdir -p $O; : > $O/commit
for i in 1 2 3 4 5; do
  stamp "round $i" $O
  h2 1 1000 300000 $BODY217 $O/h2load-$i.txt
  for L in h1 m7; do
    fresh; $BIN/herald-$L bench pipeline --scenario broadcast --devices 300000 --database-url $DB --ca-file $CA --key-file $KEY --json > $O/broadcast-$L-$i.json 2> $O/broadcast-$L-$i.err
  done
done
