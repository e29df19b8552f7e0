-- Job ids are scoped by app: a job is (app_id, id), so that one app can never take, answer for or suppress another
-- app's job by using the same id. Every table that refers to a job names its app, and the small-job claim locks
-- (app, id). Badge increments are recorded per (job, device), so that a retry or a redelivery reads the badge the
-- first delivery computed instead of incrementing again.
--
-- Upgrade: batch messages published before this migration carry no app. A worker delivers such a message when
-- exactly one app has a job with its id, which is true of every job created before this migration (ids were
-- unique); in-flight batches need not drain first. The lookup is by id alone (jobs_by_id); once a second app
-- reuses an old id, a legacy batch of it is dropped as unknown, which only a producer reusing ids while old
-- batches are still queued can cause.

ALTER TABLE jobs DROP CONSTRAINT jobs_pkey;
ALTER TABLE jobs ADD PRIMARY KEY (app_id, id);
-- lookups by id alone: legacy batch messages, `herald jobs show ID` without `--app`
CREATE INDEX jobs_by_id ON jobs (id);

ALTER TABLE batches ADD COLUMN app_id text;
UPDATE batches b SET app_id = j.app_id FROM jobs j WHERE j.id = b.job_id;
-- batches of jobs that are gone (purged) are never read again
DELETE FROM batches WHERE app_id IS NULL;
ALTER TABLE batches ALTER COLUMN app_id SET NOT NULL;
ALTER TABLE batches DROP CONSTRAINT batches_pkey;
ALTER TABLE batches ADD PRIMARY KEY (app_id, job_id, seq, attempt);
DROP INDEX batches_pending;
CREATE INDEX batches_pending ON batches (app_id, job_id) WHERE state = 'pending';

DROP INDEX delivery_failures_by_job;
CREATE INDEX delivery_failures_by_job ON delivery_failures (app_id, job_id);

-- One row per device a badge job incremented: the first delivery to a device inserts it with the badge it computed
-- (and increments the device's counter); retries and redeliveries find it and send the same badge.
CREATE TABLE badge_applications (
    app_id  text    NOT NULL,
    job_id  text    NOT NULL,
    token   text    NOT NULL,
    badge   integer NOT NULL,
    PRIMARY KEY (app_id, job_id, token)
);

-- The second key of the advisory locks on a job: unambiguous for any (app, id) pair (the app's length first), so
-- that only a hash collision, never a crafted id, makes two jobs share a lock (which only makes one wait).
CREATE FUNCTION herald_job_lock_key(app text, id text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtext(length(app)::text || ':' || app || id) $$;

DROP FUNCTION herald_claim_small_jobs(text[], integer);

-- As in schemas/005 and 006, by (app, id): locks each job it can (without waiting), then returns the jobs the group
-- must not deliver, those it could not lock and those whose row exists and is not merely enqueued by the API.
CREATE FUNCTION herald_claim_small_jobs(apps text[], ids text[], lock_space integer)
RETURNS TABLE (job_app text, job_id text)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
        SELECT i.app, i.id FROM unnest(apps, ids) AS i(app, id)
        WHERE NOT pg_try_advisory_xact_lock(lock_space, herald_job_lock_key(i.app, i.id));
    RETURN QUERY
        SELECT j.app_id, j.id FROM unnest(apps, ids) AS i(app, id)
        JOIN jobs j ON j.app_id = i.app AND j.id = i.id
        WHERE NOT (j.state = 'queued' AND j.send_at IS NULL AND j.batches = 0 AND NOT j.planned);
END
$$;
