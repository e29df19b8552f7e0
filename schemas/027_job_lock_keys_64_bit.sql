-- The advisory locks on a job (the planning claim, `PlanningClaims`; the small-job claim and the registration that
-- waits for it, `Store.claimSmallJobs` and `Store.register`) were keyed by a 32-bit `hashtext` of (app, id). Ids
-- collide often at that width (`order-101687` and `order-86052` of `com.example.news` share a key), and a job whose
-- planning claim was held by another job's planner was acknowledged as "being planned by another worker" with no
-- row: lost. The keys are 64 bits now, one `bigint` advisory lock per job and lock space, the space being the seed
-- of `hashtextextended`, so the planning and small-job spaces stay apart. (The worker also no longer acknowledges a
-- job whose claim it cannot take unless the job's row exists: a collision, however rare, makes it wait.)
--
-- Upgrade: a worker of before this migration locks the 32-bit keys and one of after it the 64-bit keys, so the two
-- do not exclude each other: while both run, two copies of one job published at once, one to each, may both be
-- planned. Replace the workers together (or accept that window) as for any change of the claim.
CREATE FUNCTION herald_job_lock_key(lock_space integer, app text, id text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended(length(app)::text || ':' || app || id, lock_space) $$;

-- As in schemas/025, with the 64-bit key of `lock_space`.
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
        WHERE NOT pg_try_advisory_xact_lock(herald_job_lock_key(lock_space, i.app, i.id));
    RETURN QUERY
        SELECT k.app_id, k.id FROM jobs k
        WHERE k.id = ANY(ids)
          AND NOT (k.state = 'queued' AND k.send_at IS NULL AND k.batches = 0 AND NOT k.planned);
END
$$;
