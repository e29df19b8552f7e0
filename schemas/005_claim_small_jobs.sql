-- Claims a group of small jobs in one round trip (`Store.claimSmallJobs`): takes a transaction-level advisory lock
-- on every id it can (without waiting), then returns the ids the group must not deliver: those it could not lock
-- (another group holds them) and those whose row exists and is not merely enqueued by the API. The function is
-- VOLATILE, so its second query takes a snapshot of its own, after the locks: it sees every commit of an earlier
-- holder of a lock. Every table access is a primary-key probe; statistics taken while the jobs table was small (a
-- new deployment, a purge) must not turn the existence check into a scan of the table once a group.
CREATE FUNCTION herald_claim_small_jobs(ids text[], lock_space integer) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
AS $$
BEGIN
    RETURN QUERY
        SELECT i.id FROM unnest(ids) AS i(id) WHERE NOT pg_try_advisory_xact_lock(lock_space, hashtext(i.id));
    RETURN QUERY
        SELECT j.id FROM jobs j
        WHERE j.id = ANY(ids) AND NOT (j.state = 'queued' AND j.send_at IS NULL AND j.batches = 0 AND NOT j.planned);
END
$$;
