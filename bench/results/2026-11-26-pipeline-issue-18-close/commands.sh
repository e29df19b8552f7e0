#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

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
