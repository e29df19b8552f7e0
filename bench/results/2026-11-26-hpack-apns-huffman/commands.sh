#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# M: the client with Huffman coding off in the request headers (h3) against on (h2); both shapes, 3 rounds each.
apns_rounds $R/$D-hpack-apns-huffman 3 h3 h2
