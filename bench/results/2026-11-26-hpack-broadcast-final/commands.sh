#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# K: the build after the review mends (h2): 300,000-device broadcasts right after their import, h2load 1x1000
# alongside; 5 rounds
broadcasts $R/$D-hpack-broadcast-final 5 h2
