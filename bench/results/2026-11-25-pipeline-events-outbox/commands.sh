# The alternation script of 2026-11-24 (../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh),
# run on 2026-11-25 with two release builds:
#   paced2   — the working tree after 504024c, before the events outbox (its jobs path is d5b29c0's)
#   8c734e5  — the events outbox (no app has events: the triggers' cost to everyone else)
#   commands.sh jobs 100000 3 OUT paced2 8c734e5
#   commands.sh jobs 100000 3 OUT 8c734e5 paced2   (order swapped; files prefixed swapped-)
