#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# H: 300,000-device broadcast right after its import, one worker, default flags; h2load 1x1000 alongside; 5 rounds
broadcasts $R/$D-hpack-broadcast-300k 5 h1 m7
