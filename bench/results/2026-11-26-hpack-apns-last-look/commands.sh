#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# P: the last look's build (h4) against h3; both shapes, 3 rounds each.
apns_rounds $R/$D-hpack-apns-last-look 3 h4 h3
