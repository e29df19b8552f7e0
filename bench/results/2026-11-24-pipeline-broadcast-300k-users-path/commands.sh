#!/bin/bash
# The users path: `herald bench pipeline` as of e55d9f2 (the import analyses devices; no VACUUM before the clock).
# Run with the script of ../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh (every round runs
# each label once, each run on a freshly created database):
#   commands.sh broadcast 300000 3 OUT aafbeffB 96b5e98
