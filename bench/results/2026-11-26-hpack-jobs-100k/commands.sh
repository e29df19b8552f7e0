#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# I: 100,000 single-device jobs; C baseline alongside; 3 rounds
single_jobs $R/$D-hpack-jobs-100k 3 h1 m7
