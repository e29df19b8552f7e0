#!/bin/bash
# This shape ran in the same loop as the other one: ../2026-11-26-apns-1x1000/commands.sh (section A, B).
exec "$(dirname "$0")/../2026-11-26-apns-1x1000/commands.sh"
