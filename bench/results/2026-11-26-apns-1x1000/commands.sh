#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

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
