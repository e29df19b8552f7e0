-- Events out (`herald.events`): what a backend would otherwise poll for, written in the transaction that makes it
-- true and published afterwards by the workers' relay (`Store.relayEvents`), with confirms, then deleted. A job's
-- final state is reached once, so each job has one event; a relay that dies between the publish and the delete
-- publishes it again with the same message id (`event_outbox.id`), which a subscriber can drop.
--
-- Only the apps in `event_apps` (`"events": true` in the apps file; the workers keep the table in step) have events:
-- the triggers cost the others one lookup in an empty or tiny table.
CREATE TABLE event_apps (app_id text PRIMARY KEY);

CREATE TABLE event_outbox (
    id          bigserial   PRIMARY KEY,
    routing_key text        NOT NULL,
    body        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- `job.finished.<app>` (done), `job.failed.<app>`, `job.cancelled.<app>`, with the job's counters.
CREATE FUNCTION herald_job_event(job jobs) RETURNS void LANGUAGE sql AS $$
    INSERT INTO event_outbox (routing_key, body)
    SELECT 'job.' || CASE job.state WHEN 'done' THEN 'finished' ELSE job.state END || '.' || job.app_id,
           jsonb_build_object(
               'event', 'job.' || CASE job.state WHEN 'done' THEN 'finished' ELSE job.state END,
               'app', job.app_id, 'job', job.id, 'state', job.state, 'error', job.error,
               'targeted', job.targeted, 'sent', job.sent, 'pruned', job.pruned, 'failed', job.failed,
               'expired', job.expired, 'retried', job.retried,
               'finished_at', to_char(coalesce(job.finished_at, now()) AT TIME ZONE 'UTC',
                                      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    WHERE EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = job.app_id)
$$;

-- A job that becomes final by an update (a batch's completion, the end of planning, a stop, a cancel).
CREATE FUNCTION herald_job_final_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM herald_job_event(NEW);
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_final_updated AFTER UPDATE OF state ON jobs FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state AND herald_job_is_final(NEW.state))
    EXECUTE FUNCTION herald_job_final_updated();

-- Jobs inserted final: a group of small jobs written done, a job rejected at intake. One call per statement.
CREATE FUNCTION herald_jobs_inserted_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM herald_job_event(i) FROM inserted i
    WHERE herald_job_is_final(i.state) AND EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = i.app_id);
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_inserted_final AFTER INSERT ON jobs REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION herald_jobs_inserted_final();

-- `token.pruned.<app>`: the tokens one statement pruned, per job.
CREATE FUNCTION herald_tokens_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (routing_key, body)
    SELECT 'token.pruned.' || p.app_id,
           jsonb_build_object('event', 'token.pruned', 'app', p.app_id, 'job', p.job_id,
                              'tokens', jsonb_agg(jsonb_build_object('token', p.token, 'reason', p.reason)
                                                  ORDER BY p.token))
    FROM inserted p
    WHERE EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = p.app_id)
    GROUP BY p.app_id, p.job_id;
    RETURN NULL;
END $$;
CREATE TRIGGER dead_tokens_pruned AFTER INSERT ON dead_tokens REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION herald_tokens_pruned();
