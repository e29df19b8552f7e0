-- The existence check of `herald_claim_small_jobs` (schemas/007) joined the group's (app, id) pairs with jobs. Its
-- generic plan is made once per session from the statistics of the moment; statistics taken while jobs was nearly
-- empty (a new deployment, a purge, `herald bench pipeline` after its reset) gave a nested loop over a full index
-- scan of jobs, materialised and compared with every pair: 1.9 s per group at 23,000 jobs, and single-device job
-- throughput fell to 0.3-0.5x. A LATERAL probe is parameterised by each pair, so the only plans left are one
-- primary-key probe per pair, whatever the statistics say.
CREATE OR REPLACE FUNCTION herald_claim_small_jobs(apps text[], ids text[], lock_space integer)
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
        CROSS JOIN LATERAL (
            SELECT k.app_id, k.id, k.state, k.send_at, k.batches, k.planned FROM jobs k
            WHERE k.app_id = i.app AND k.id = i.id
            OFFSET 0
        ) j
        WHERE NOT (j.state = 'queued' AND j.send_at IS NULL AND j.batches = 0 AND NOT j.planned);
END
$$;
