-- Single-device jobs cost PostgreSQL about a third more than before the tenants work (issue 18): about 22 us of
-- statement time per job against 16 (pg_stat_statements over `herald bench pipeline --scenario jobs`). Two parts of
-- that are taken back here.
--
-- 1. The events triggers (schemas/018) ran for every app, events or not: the statement trigger on jobs inserted
--    final keeps a transition table of every row inserted, and a group of small jobs inserts a row per job, done.
--    That cost the group insert 2-3 us a job (12.4 us with the trigger disabled, 15.9 with it). The three event
--    triggers are now enabled only while some app has events (`event_apps` is not empty): a statement trigger on
--    `event_apps` enables them when its first app arrives and disables them when its last one leaves, in the
--    transaction that changes it, so a job that finishes after an app's events are on has its event, as before.
--    Enabling takes a SHARE ROW EXCLUSIVE lock on jobs and dead_tokens for a moment, and only when the state changes
--    (a worker whose apps file turns events on or off for the first or the last app).
CREATE FUNCTION herald_sync_event_triggers() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    wanted boolean := EXISTS (SELECT 1 FROM event_apps);
    enabled boolean;
BEGIN
    SELECT tgenabled <> 'D' INTO enabled FROM pg_trigger
    WHERE tgrelid = 'jobs'::regclass AND tgname = 'jobs_inserted_final';
    IF enabled IS NOT DISTINCT FROM wanted THEN
        RETURN NULL;
    END IF;
    IF wanted THEN
        ALTER TABLE jobs ENABLE TRIGGER jobs_inserted_final;
        ALTER TABLE jobs ENABLE TRIGGER jobs_final_updated;
        ALTER TABLE dead_tokens ENABLE TRIGGER dead_tokens_pruned;
    ELSE
        ALTER TABLE jobs DISABLE TRIGGER jobs_inserted_final;
        ALTER TABLE jobs DISABLE TRIGGER jobs_final_updated;
        ALTER TABLE dead_tokens DISABLE TRIGGER dead_tokens_pruned;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER event_apps_changed AFTER INSERT OR DELETE OR TRUNCATE ON event_apps
    FOR EACH STATEMENT EXECUTE FUNCTION herald_sync_event_triggers();
-- The state the table is in now.
DELETE FROM event_apps WHERE false;

-- 2. The claim's existence check (schemas/013) probed the primary key once per claimed id through a LATERAL
--    subquery, executed as a plan node of its own per id: about 3 us a job, against 1 for the single ScalarArrayOp
--    probe of before 013. It is that one index scan again, `id = ANY(ids)` on the primary key's leading column (the
--    only index that can serve it, whatever indexes a deployment adds), returning every existing job with one of the
--    ids whatever its app: `Store.claimSmallJobs` drops the returned (app, id) pairs from those it asked for, so a
--    job of another app with the same id is returned and changes nothing.
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
        SELECT k.app_id, k.id FROM jobs k
        WHERE k.id = ANY(ids)
          AND NOT (k.state = 'queued' AND k.send_at IS NULL AND k.batches = 0 AND NOT k.planned);
END
$$;
