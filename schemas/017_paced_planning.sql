-- Paced planning: a job whose planner stopped after one window of batches (a throttled job's next 30 s of its rate,
-- or the worker's `planAhead` batches) is resumed once fewer than `plan_resume_below` of its batches are pending:
-- the scheduler publishes its job message again, and planning goes on from `plan_cursor`. NULL: not paused.
ALTER TABLE jobs ADD COLUMN plan_resume_below integer;
CREATE INDEX jobs_planning_paused ON jobs (app_id, id) WHERE plan_resume_below IS NOT NULL;
