#!/bin/bash
# Issue 17's closing figures, with 1482bf4's bench method on both sides (labels in ./commit).
# Run with the script of ../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh (every round runs
# each label once, each run on a freshly created database):
#   commands.sh jobs 100000 3 OUT 1482bf4 bfb5cd2-oldbench
#   commands.sh broadcast 300000 3 OUT 1482bf4 bfb5cd2-oldbench
