#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# G: the client alone after its own HPACK encoding (h1), against the build before it (m7); both shapes, 5 rounds each.
# Each shape has its own subdirectory (bench/ratios.py reads one at a time).
O=$R/$D-hpack-apns; mkdir -p $O; : > $O/commit
for shape in "1 1000" "4 250"; do
  set -- $shape; C=$1; S=$2; mkdir -p $O/${C}x${S}
  for i in 1 2 3 4 5; do
    stamp "${C}x${S} round $i" $O
    h2 $C $S 300000 $BODY250 $O/${C}x${S}/h2load-$i.txt
    for L in h1 m7; do
      $BIN/herald-$L bench apns --api batch --connections $C --streams $S --count 300000 --json > $O/${C}x${S}/apns-$L-batch-$i.json 2>/dev/null
    done
    $BIN/herald-h1 bench apns --api send --connections $C --streams $S --count 300000 --json > $O/${C}x${S}/apns-h1-send-$i.json 2>/dev/null
  done
done
