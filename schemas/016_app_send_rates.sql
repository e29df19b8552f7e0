-- Per-app send rates (`max_per_second` in the apps file): one row per app that has one, holding the start of the
-- app's next free slot. Like a job's `throttle_next_at` (a leaky bucket), shared by every worker: a batch of an app
-- with a rate takes its turn here and in its job's row, in that order (`Store.takeTurn`).
CREATE TABLE app_send_rates (
    app_id text PRIMARY KEY,
    next_at timestamptz NOT NULL
);
