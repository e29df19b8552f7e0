-- A job's final states, named once: `herald_job_is_final(state)` is what every statement asks (registration,
-- cancellation, purge, restore, reports). An IMMUTABLE SQL function of one expression: PostgreSQL inlines it, so
-- a condition on it plans exactly as the expression it stands for. Any worker runs with or without it, until the
-- first release whose statements call it.
CREATE FUNCTION herald_job_is_final(state text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT state IN ('done', 'failed', 'cancelled') $$;
