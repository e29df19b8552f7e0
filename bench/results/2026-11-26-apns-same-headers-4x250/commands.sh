#!/bin/bash
# Run as: commands.sh <this directory> 5 4 250 m1 (the same script as the 1x1000 shape, other arguments).
exec "$(dirname "$0")/../2026-11-26-apns-same-headers-1x1000/commands.sh" "$@"
