#!/bin/bash
# The alternating sequence of ../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh, run as
#   commands.sh jobs 100000 5 <this directory> 1482bf4 m1old m3old
exec "$(dirname "$0")/../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh" "$@"
