# Issue 18, 2026-11-26: single-device jobs against 1482bf4 (the issue's baseline), with 1482bf4's bench method on
# every side (VACUUM (ANALYZE) and job bodies encoded before the clock; today's bench leaves both out), each run on a
# freshly created database, labels alternating within each round. Labels:
#   1482bf4  the baseline;
#   head     main at 8315b49 (issues 19 and 20 in), before schemas/025;
#   c025     the same binary with schemas/025 (the events triggers only while some app has events; the small-job
#            claim's existence check one index scan again).
# The alternation script is ../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh:
#   before-*.json: commands.sh jobs 100000 3 OUT 1482bf4 head
#   *.json:        commands.sh jobs 100000 3 OUT 1482bf4 head c025
# Later the same day, with the review mends (04fa842: PreparedJob's Live Activity part boxed, one apps lookup per
# delivery) as the label "final" (04fa842 + the bench method of 1482bf4):
#   final-seq-*.json: commands.sh jobs 100000 3 OUT 1482bf4 c025 final
#   swapped-*.json:   commands.sh jobs 100000 3 OUT final 1482bf4      (the other order)
