#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# Q: the second look's build (h5, 8d646b1) against h4 (c8eb0c3), then an A/A check: h4b is a copy of h4's binary.
# Rounds 1-3 ran both shapes in turn; round i's 1x1000 came before its 4x250.
O=$R/$D-hpack-apns-second-look
: > $O/commit
for i in 1 2 3; do
  apns_alternating $O 1x1000 $i 1 h4 h5
  apns_alternating $O 4x250 $i 1 h4 h5
done
apns_alternating $O 4x250 4 4 h4 h5
apns_alternating $O 4x250 8 6 h4 h4b h5
