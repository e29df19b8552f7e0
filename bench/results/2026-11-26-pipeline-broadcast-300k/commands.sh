#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# D: 300,000-device broadcast right after its import, one worker, default flags; h2load 1x1000 alongside; 5 rounds
broadcasts $R/$D-pipeline-broadcast-300k 5 m1 c0
