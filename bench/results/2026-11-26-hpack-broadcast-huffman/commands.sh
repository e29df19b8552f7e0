#!/bin/bash
. "$(dirname "$0")/../2026-11-26-sequence.sh"

# L: broadcasts with Huffman coding off in the request headers (h3) against on (h2); h2load 1x1000 alongside; 4 rounds
broadcasts $R/$D-hpack-broadcast-huffman 4 h3 h2
