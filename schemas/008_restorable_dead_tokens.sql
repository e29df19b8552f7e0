-- Pruning you can undo: a dead-token record keeps everything needed to put the device row back as it was
-- (`herald devices restore`, `POST /v1/apps/{app}/jobs/{id}/restore`). Records written before this migration have
-- NULL here and cannot be restored (the restore counts them apart).
ALTER TABLE dead_tokens
    ADD COLUMN user_id       text,
    ADD COLUMN locale        text,
    ADD COLUMN topics        text[],
    ADD COLUMN environment   text,
    ADD COLUMN registered_at timestamptz,
    ADD COLUMN badge         integer;

-- a job's dead tokens, for the restore
CREATE INDEX dead_tokens_by_job ON dead_tokens (app_id, job_id) WHERE job_id IS NOT NULL;

-- The prune breaker's running count across a job's batches: answers that were BadDeviceToken or
-- DeviceTokenNotForTopic, whether pruned or (breaker tripped) recorded as failures. The denominator is the job's
-- sent + pruned + failed, which the write-back keeps already.
ALTER TABLE jobs ADD COLUMN suspect_answers bigint NOT NULL DEFAULT 0;
