-- Live Activities: what Herald keeps per activity (`target.activity`) and per broadcast channel
-- (`target.channel`) to coalesce superseded events and to spend Apple's priority-10 budget
-- (docs/live-activities.md).
--
-- When a worker resolves an update or an end, it locks the row and compares the job's event timestamp with the
-- newest one resolved so far: an older event is not sent (the job is cancelled as superseded). The hourly budget of
-- priority-10 sends is a window that starts with the first such send and restarts an hour later.
CREATE TABLE live_activities (
    app_id              text        NOT NULL,
    kind                text        NOT NULL CHECK (kind IN ('activity', 'channel')),
    key                 text        NOT NULL,
    -- the newest event timestamp resolved (seconds since 1970, as aps.timestamp), and its job
    newest_timestamp    bigint      NOT NULL DEFAULT 0,
    newest_job          text,
    budget_window_start timestamptz NOT NULL DEFAULT now(),
    budget_used         integer     NOT NULL DEFAULT 0,
    ended_at            timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, kind, key)
);
