#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# G: the client alone after its own HPACK encoding (h1), against the build before it (m7); both shapes, 5 rounds each.
apns_rounds $R/$D-hpack-apns 5 h1 m7
