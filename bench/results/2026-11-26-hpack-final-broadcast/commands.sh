#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# N: the final build (h3) alone: 300,000-device broadcasts right after their import, h2load 1x1000 alongside; 5 rounds
broadcasts $R/$D-hpack-final-broadcast 5 h3
