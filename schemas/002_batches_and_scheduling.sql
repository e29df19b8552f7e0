-- Fan-out into batches shared by many workers, scheduling, throttling and badge counters.

-- the validated job as published, so that batches and the scheduler can rebuild it without the original message
ALTER TABLE jobs ADD COLUMN spec jsonb;
-- when a job is due (send_at); the scheduler releases jobs whose time has come
ALTER TABLE jobs ADD COLUMN send_at timestamptz;
-- when the producer published it (AMQP timestamp), else when a worker first saw it: end-to-end latency starts here
ALTER TABLE jobs ADD COLUMN published_at timestamptz NOT NULL DEFAULT now();
-- planning: the last token put into a batch, and whether every batch has been planned
ALTER TABLE jobs ADD COLUMN plan_cursor text;
ALTER TABLE jobs ADD COLUMN planned boolean NOT NULL DEFAULT false;
ALTER TABLE jobs ADD COLUMN batches integer NOT NULL DEFAULT 0;
-- a shared leaky bucket: the earliest time the next notification of this job may go out
ALTER TABLE jobs ADD COLUMN throttle_per_second integer CHECK (throttle_per_second > 0);
ALTER TABLE jobs ADD COLUMN throttle_next_at timestamptz;

CREATE INDEX jobs_due ON jobs (send_at) WHERE state = 'scheduled';

-- one row per delivery of a batch (attempt 1 planned, attempt n a retry of what failed transiently);
-- a batch's completion is written in the same transaction as its results, so a redelivered batch that is
-- already done is acknowledged without sending
CREATE TABLE batches (
    job_id       text        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq          integer     NOT NULL,
    attempt      integer     NOT NULL,
    state        text        NOT NULL CHECK (state IN ('pending', 'done')),
    sent         integer     NOT NULL DEFAULT 0,
    pruned       integer     NOT NULL DEFAULT 0,
    failed       integer     NOT NULL DEFAULT 0,
    retried      integer     NOT NULL DEFAULT 0,
    expired      integer     NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    PRIMARY KEY (job_id, seq, attempt)
);

CREATE INDEX batches_pending ON batches (job_id) WHERE state = 'pending';
