# Issue 18 (lanes by broker priority, webhooks), run on 2026-11-25 with the alternation script of
# ../2026-11-24-pipeline-issues-16-17-bench-method-of-1482bf4/commands.sh (each round runs every label once, each run
# on a freshly created database). Labels in ./commit.
#   commands.sh jobs 100000 3 OUT 1482bf4 c9a522e-oldbench
#   commands.sh broadcast 300000 3 OUT 1482bf4 c9a522e-oldbench
# The cost of the priority queues alone, both with today's bench (files prefixed priority-):
#   commands.sh jobs 100000 3 OUT c9a522e nopri
# Later the same day, on a quieter machine (files prefixed quiet-, swapped-, since-issue-17-):
#   commands.sh jobs 100000 3 OUT 1482bf4 c9a522e-oldbench          (quiet-)
#   commands.sh jobs 100000 3 OUT c9a522e-oldbench 1482bf4          (swapped-: the other order)
#   commands.sh jobs 100000 3 OUT bfb5cd2-oldbench c9a522e-oldbench (since-issue-17-: main at issue 17's close)
# schemas/019 (the job-event trigger in PL/pgSQL, event_apps first), files prefixed trigger-:
#   commands.sh jobs 100000 3 OUT c9a522e-oldbench trig-oldbench
