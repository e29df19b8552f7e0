#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# J: the final client (h2, after the review mends) against h1; both shapes, 3 rounds each.
apns_rounds $R/$D-hpack-apns-final 3 h2 h1
