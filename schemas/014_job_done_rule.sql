-- When a job is done, decided once: `herald_job_completes(state, planned, work_left)` is true for a job that is
-- running, fully planned and has no work left. Every statement that can mark a job done asks it, each with its own
-- facts for `work_left`:
--   - a batch's completion and the end of planning (`Store.finishIfComplete`): a pending batch, or a small job's
--     one batch that has no batch row yet;
--   - a group of small jobs written at once (`WriteSmallJobs`): the job's one batch left something to write;
--   - small jobs completed after their group (`CompleteSmallJobs`): nothing (the completion was their one batch).
-- An IMMUTABLE SQL function of one expression, each argument used once: PostgreSQL inlines it, so the statements
-- plan exactly as the expression it stands for. Workers of the previous release run with or without it.
CREATE FUNCTION herald_job_completes(state text, planned boolean, work_left boolean) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT state = 'running' AND planned AND NOT work_left $$;
