#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# E: 100,000 single-device jobs, current method; C baseline alongside; 3 rounds
single_jobs $R/$D-pipeline-jobs-100k 3 m1 c0
