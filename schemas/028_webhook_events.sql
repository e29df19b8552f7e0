-- Webhooks sign only what the outbox holds (issue 32). Until now the webhook sender signed whatever body arrived on
-- `herald.webhooks`, and anyone who may publish to the events exchange (or to the webhooks queue through the default
-- exchange) got any body signed with any app's webhook secret. Now an event of an app with a webhook is copied here
-- in the transaction that writes it to the outbox, before the relay can publish it; the message on the broker is
-- only a doorbell naming the event's id (its message id, `event-<n>`). The sender reads the routing key and the body
-- from this row and signs those: a message with no row here is refused unsigned (`herald_webhooks_total{outcome=
-- "refused"}`). A delivered event's row is deleted, so a second copy of it (a relay that published twice) is dropped
-- rather than posted again. Rows of events that were parked stay until retention removes them (the parked copies'
-- age, `retention.parked`).
--
-- `webhook_apps` holds the apps whose workers have a webhook for them; the workers keep it in step with their apps
-- files, as they do `event_apps`.
CREATE TABLE webhook_apps (app_id text PRIMARY KEY);

CREATE TABLE webhook_events (
    id          bigint      PRIMARY KEY,
    app_id      text        NOT NULL,
    routing_key text        NOT NULL,
    body        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_by_time ON webhook_events (created_at);

-- The new outbox rows of apps with a webhook, per statement: the events triggers (schemas/018) insert them, and they
-- run only while some app has events (schemas/025), so an app without events costs nothing more. The body is the
-- text the relay publishes (`body::text`).
CREATE FUNCTION herald_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (id, app_id, routing_key, body)
    SELECT i.id, i.body->>'app', i.routing_key, i.body::text FROM inserted i
    WHERE EXISTS (SELECT 1 FROM webhook_apps w WHERE w.app_id = i.body->>'app')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER event_outbox_webhooks AFTER INSERT ON event_outbox REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_events();

-- A job the API recorded but never published (issue 32): the API inserts its row, publishes the message, and only
-- then can it answer; an API that died in between left the row `queued` for ever, and a retry with the same
-- Idempotency-Key answered "duplicate". The API now inserts its rows `awaiting_publish` and clears the flag once the
-- broker confirmed the message; the workers' scheduler publishes a queued row still awaiting it after a grace period
-- (`Store.releaseUnpublishedJobs`), from its spec, as it releases a scheduled job. A duplicate message (an API that
-- died after the confirm, before clearing the flag) is harmless: the job id makes it one. Adding a column with a
-- constant default rewrites nothing; the partial index holds only the rows awaiting their publish.
ALTER TABLE jobs ADD COLUMN awaiting_publish boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_awaiting_publish ON jobs (created_at) WHERE awaiting_publish;
