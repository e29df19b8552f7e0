#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# O: 100,000 single-device jobs, the final build (h3) against main before issue 21's second close (m7); 3 rounds
single_jobs $R/$D-hpack-final-jobs 3 h3 m7
