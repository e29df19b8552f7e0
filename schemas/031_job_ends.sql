-- A job's end, written in one place (issue 34). `herald_end_jobs` is the only statement that sets a job's state to
-- done, failed or cancelled: it decides whether each job may end the way its caller asks, writes the end, and returns
-- every job it wrote, with the state it has now, whether this call ended it, and the state it had where the way
-- says (NULL otherwise). A group of small jobs (hundreds at once, whose caller needs only how many ended) gets one
-- row per final state instead, without a job, with `jobs` the number of jobs it stands for (1 on every other row):
-- sending a row per job cost the group's statement a tenth of its time. `Store` counts `herald_jobs_finished_total` from that, once, after the commit. The states
-- and the changes between them are listed beside `JobState` (Sources/HeraldStore/Jobs/JobState.swift); a test
-- drives this function through that table.
--
-- `p_how` is what the caller knows:
--   group            a group of small jobs delivered inside its claim (schemas/007): each job's row is written once,
--                    done with its counts (`p_states` 'done') or running for the exceptions (dead tokens to record,
--                    a retry), from no row or from the row the API enqueued (a cancel that came first wins);
--   counted          small jobs their group left running: their counts are added, and a running one becomes done
--                    (its one batch was this); a job stopped meanwhile keeps its state and still gets its counts;
--   complete         after a batch's completion or the end of planning: a running, fully planned job with no
--                    pending batch (and no small job's batch without its row) becomes done;
--   stop             a job not yet final takes the final state asked, with its reason and the counts given (a
--                    channel broadcast: one targeted, one sent or failed);
--   record           a job that sent nothing ends with the final state asked, whether or not it has a row yet (a
--                    parked job, a superseded or expired one, a Live Activity job with nothing to do);
--   record_unstarted the same, only for a job no worker started (no row, or the row the API enqueued);
--   reject           a job refused at intake (parked): failed with the reason, neither started nor planned.
-- Whether a job is complete is `herald_job_completes` (schemas/014); whether it is final, `herald_job_is_final`
-- (schemas/012). The arrays are parallel, one element per job; the ways read only the arrays they need.
-- Workers of the previous release keep their own statements: the function is new and nothing else changes.
CREATE FUNCTION herald_end_jobs(
    p_how text, p_apps text[], p_ids text[], p_states text[], p_errors text[], p_kinds text[],
    p_targeted bigint[], p_sent bigint[], p_failed bigint[], p_expired bigint[], p_retried bigint[],
    p_specs text[], p_published bigint[], p_cursors text[])
RETURNS TABLE (job_app text, job_id text, job_state text, ended boolean, state_before text, jobs bigint)
LANGUAGE plpgsql VOLATILE
-- Every way is driven by the jobs' keys. Its statements' plans are cached per connection, generic once PostgreSQL
-- prefers them, and a generic plan does not know how many jobs come: after a bulk import (statistics that say the
-- tables are empty) it took a sequential scan of jobs for `complete`. QueryPlanTests holds each way to its indexes.
SET enable_seqscan = off
AS $$
BEGIN
    IF p_how IS NULL OR p_how NOT IN ('group', 'counted', 'complete', 'stop', 'record', 'record_unstarted', 'reject')
    THEN
        RAISE EXCEPTION 'herald_end_jobs: no way to end jobs called "%"', p_how USING ERRCODE = '22023';
    END IF;
    IF p_how IN ('stop', 'record', 'record_unstarted', 'reject')
       AND EXISTS (SELECT 1 FROM unnest(p_states) AS s(state) WHERE herald_job_is_final(s.state) IS NOT TRUE) THEN
        RAISE EXCEPTION 'herald_end_jobs: a % must name a final state', p_how USING ERRCODE = '22023';
    END IF;

    IF p_how = 'group' THEN
        RETURN QUERY
            WITH written AS (
                INSERT INTO jobs AS j (id, app_id, state, target_kind, spec, published_at, started_at, finished_at,
                                       planned, batches, plan_cursor, targeted, sent, failed, expired, retried)
                SELECT i.id, i.app, CASE WHEN i.completes THEN 'done' ELSE 'running' END, i.kind,
                       nullif(i.spec, '')::jsonb, to_timestamp(i.published / 1000.0), now(),
                       CASE WHEN i.completes THEN clock_timestamp() END, true, 1, i.cursor, i.targeted, i.sent,
                       i.failed, i.expired, i.retried
                FROM (SELECT u.*, herald_job_completes('running', true, u.state IS DISTINCT FROM 'done') AS completes
                      FROM unnest(p_ids, p_apps, p_states, p_kinds, p_specs, p_published, p_cursors, p_targeted,
                                  p_sent, p_failed, p_expired, p_retried)
                          AS u(id, app, state, kind, spec, published, cursor, targeted, sent, failed, expired, retried)
                     ) AS i
                ON CONFLICT (app_id, id) DO UPDATE SET state = EXCLUDED.state, started_at = EXCLUDED.started_at,
                    finished_at = EXCLUDED.finished_at, planned = true, batches = 1,
                    plan_cursor = EXCLUDED.plan_cursor, targeted = EXCLUDED.targeted, sent = EXCLUDED.sent,
                    failed = EXCLUDED.failed, expired = EXCLUDED.expired, retried = EXCLUDED.retried
                WHERE j.state = 'queued'
                RETURNING j.state)
            SELECT NULL::text, NULL::text, w.state, true, NULL::text, count(*) FROM written w
            WHERE herald_job_is_final(w.state) GROUP BY w.state;

    ELSIF p_how = 'counted' THEN
        -- Driven from the group's rows: one primary-key probe of jobs (and of batches, for the anti-join) per job.
        -- With `j.id = ANY(...)` as well, the planner (estimating that almost no job runs) took the jobs found that
        -- way as the outer side of a nested loop and scanned the whole unnest for each: quadratic in the group.
        RETURN QUERY
            WITH written AS (
                UPDATE jobs j SET
                    state = CASE WHEN herald_job_completes(j.state, j.planned, false) THEN 'done' ELSE j.state END,
                    finished_at = CASE WHEN herald_job_completes(j.state, j.planned, false) THEN now()
                                       ELSE j.finished_at END,
                    targeted = j.targeted + i.targeted, sent = j.sent + i.sent, failed = j.failed + i.failed,
                    expired = j.expired + i.expired, retried = j.retried + i.retried
                FROM unnest(p_apps, p_ids, p_targeted, p_sent, p_failed, p_expired, p_retried)
                    AS i(app_id, id, targeted, sent, failed, expired, retried)
                WHERE j.app_id = i.app_id AND j.id = i.id
                  AND j.state IN ('running', 'failed', 'cancelled')
                  AND NOT EXISTS (SELECT 1 FROM batches b WHERE b.app_id = i.app_id AND b.job_id = i.id)
                RETURNING j.app_id, j.id, j.state)
            SELECT w.app_id, w.id, w.state, w.state = 'done',
                   CASE WHEN w.state = 'done' THEN 'running' ELSE w.state END, 1::bigint
            FROM written w;

    ELSIF p_how = 'complete' THEN
        -- One probe per job for its first pending batch: as an anti-join the planner may scan every pending batch
        -- per job, and as a join it walked every pending batch of every job when statistics taken while the table
        -- was nearly empty said none is pending. The caller locked the job rows in an earlier statement of its
        -- transaction (Store.addCountsAndFinish), so this one's snapshot sees every other completion of them.
        RETURN QUERY
            WITH wanted AS (SELECT * FROM unnest(p_apps, p_ids) AS u(app_id, id)),
            still_pending AS (
                SELECT w.app_id, w.id FROM wanted w
                CROSS JOIN LATERAL (
                    SELECT 1 FROM batches b WHERE b.app_id = w.app_id AND b.job_id = w.id AND b.state = 'pending'
                    LIMIT 1) AS p),
            with_batch_rows AS (
                SELECT w.app_id, w.id FROM wanted w
                WHERE EXISTS (SELECT 1 FROM batches b WHERE b.app_id = w.app_id AND b.job_id = w.id)),
            finished AS (
                UPDATE jobs j SET state = 'done', finished_at = now()
                FROM wanted w
                WHERE j.app_id = w.app_id AND j.id = w.id
                  AND herald_job_completes(j.state, j.planned,
                      (j.app_id, j.id) IN (SELECT s.app_id, s.id FROM still_pending s)
                      -- a small job started in a group has a batch but no batch row: only its own completion ends it
                      OR (j.batches > 0 AND (j.app_id, j.id) NOT IN (SELECT r.app_id, r.id FROM with_batch_rows r)))
                RETURNING j.app_id, j.id, j.state)
            SELECT f.app_id, f.id, f.state, true, 'running'::text, 1::bigint FROM finished f;

    ELSIF p_how = 'stop' THEN
        -- The rows are locked first (in key order, as every writer of several jobs does), so that the state each had
        -- is the one this call replaced.
        RETURN QUERY
            WITH wanted AS (
                SELECT * FROM unnest(p_apps, p_ids, p_states, p_errors, p_targeted, p_sent, p_failed)
                    AS u(app_id, id, state, error, targeted, sent, failed)),
            prior AS (
                SELECT j.app_id, j.id, j.state FROM jobs j JOIN wanted w ON j.app_id = w.app_id AND j.id = w.id
                ORDER BY j.app_id, j.id FOR UPDATE OF j),
            stopped AS (
                -- The counts given (a channel broadcast's: one targeted) replace the job's.
                UPDATE jobs j SET state = w.state, error = nullif(w.error, ''), finished_at = now(),
                    planned = j.planned OR w.targeted > 0,
                    targeted = CASE WHEN w.targeted > 0 THEN w.targeted ELSE j.targeted END,
                    sent = CASE WHEN w.targeted > 0 THEN w.sent ELSE j.sent END,
                    failed = CASE WHEN w.targeted > 0 THEN w.failed ELSE j.failed END
                FROM wanted w JOIN prior p ON p.app_id = w.app_id AND p.id = w.id
                WHERE j.app_id = w.app_id AND j.id = w.id AND NOT herald_job_is_final(p.state)
                RETURNING j.app_id, j.id, j.state, p.state AS was)
            SELECT s.app_id, s.id, s.state, true, s.was, 1::bigint FROM stopped s;

    ELSIF p_how = 'reject' THEN
        RETURN QUERY
            WITH written AS (
                INSERT INTO jobs AS j (id, app_id, state, target_kind, error, finished_at)
                SELECT u.id, u.app_id, u.state, u.kind, nullif(u.error, ''), now()
                FROM unnest(p_apps, p_ids, p_states, p_errors, p_kinds) AS u(app_id, id, state, error, kind)
                ON CONFLICT (app_id, id) DO UPDATE SET state = EXCLUDED.state, error = EXCLUDED.error,
                    finished_at = now()
                WHERE NOT herald_job_is_final(j.state)
                RETURNING j.app_id, j.id, j.state)
            SELECT w.app_id, w.id, w.state, true, NULL::text, 1::bigint FROM written w;

    ELSE
        RETURN QUERY
            WITH written AS (
                INSERT INTO jobs AS j (id, app_id, state, target_kind, error, planned, started_at, finished_at)
                SELECT u.id, u.app_id, u.state, u.kind, nullif(u.error, ''), true, now(), now()
                FROM unnest(p_apps, p_ids, p_states, p_errors, p_kinds) AS u(app_id, id, state, error, kind)
                ON CONFLICT (app_id, id) DO UPDATE SET
                    state = EXCLUDED.state, error = EXCLUDED.error, planned = true, finished_at = now()
                WHERE NOT herald_job_is_final(j.state) AND (p_how = 'record' OR j.state = 'queued')
                RETURNING j.app_id, j.id, j.state)
            SELECT w.app_id, w.id, w.state, true, NULL::text, 1::bigint FROM written w;
    END IF;
END
$$;
