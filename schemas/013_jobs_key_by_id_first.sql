-- Jobs are keyed (id, app_id) instead of (app_id, id), and jobs_by_id (schemas/007) and jobs_by_app_time
-- (schemas/001) are gone: the primary key serves lookups by id alone (legacy batch messages, `herald jobs show ID`
-- without --app) as well as by (app, id), and every job inserted writes two indexes fewer. Single-device jobs ran
-- at 0.90x of the release before 007 with the extra index (PostgreSQL's time per job insert rose by about 9 us).
-- jobs_by_app_time also let statistics that did not know an app yet (a demo analysed, then a real app's jobs)
-- walk every job of the app to find one by key; a job listing narrowed to an app now walks jobs_by_time and
-- filters, which only reports do.
--
-- Upgrade: rebuilding the primary key locks `jobs` for as long as it takes on a large table; apply it while the
-- workers and the API are stopped, as for 007.
ALTER TABLE jobs DROP CONSTRAINT jobs_pkey;
ALTER TABLE jobs ADD PRIMARY KEY (id, app_id);
DROP INDEX jobs_by_id;
DROP INDEX jobs_by_app_time;

-- The small-job claim's existence check keeps one generic plan per session (schemas/006), made at the session's
-- first claim. Made while `jobs` was (nearly) empty, every index of jobs tied, and PostgreSQL sometimes took
-- `jobs_by_app_time`, walking every job of the app for each claimed id, for the session's life: 39 ms a group
-- instead of 0.6 ms, single-device jobs at 0.2-0.35x in one `herald bench pipeline --scenario jobs` run of three
-- (auto_explain). The probe compares the app as an expression no index starts with, so the only index it can use
-- is the primary key by its leading column (id), whatever indexes a deployment adds, and with bitmap scans off, one index probe per claimed id in any
-- plan, whatever the statistics. (A custom plan per call also avoided the walk, at about 0.4 ms of planning a
-- group.)
CREATE OR REPLACE FUNCTION herald_claim_small_jobs(apps text[], ids text[], lock_space integer)
RETURNS TABLE (job_app text, job_id text)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
        SELECT i.app, i.id FROM unnest(apps, ids) AS i(app, id)
        WHERE NOT pg_try_advisory_xact_lock(lock_space, herald_job_lock_key(i.app, i.id));
    RETURN QUERY
        SELECT j.app_id, j.id FROM unnest(apps, ids) AS i(app, id)
        CROSS JOIN LATERAL (
            SELECT k.app_id, k.id, k.state, k.send_at, k.batches, k.planned FROM jobs k
            WHERE k.id = i.id AND (k.app_id || '') = i.app
            OFFSET 0
        ) j
        WHERE NOT (j.state = 'queued' AND j.send_at IS NULL AND j.batches = 0 AND NOT j.planned);
END
$$;
