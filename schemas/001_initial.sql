-- Herald's first schema: the device registry, jobs with their counters, and dead-token records.

CREATE TABLE devices (
    app_id        text        NOT NULL,
    -- lowercase hex, as APNs wants it in :path; Apple says not to assume a length
    token         text        NOT NULL CHECK (token ~ '^([0-9a-f]{2})+$'),
    user_id       text,
    locale        text,
    topics        text[]      NOT NULL DEFAULT '{}',
    environment   text        CHECK (environment IN ('production', 'sandbox')),
    -- what the 410 timestamp rule compares against: a device is pruned only if it registered before APNs saw it die
    registered_at timestamptz NOT NULL DEFAULT now(),
    badge         integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, token)
);

-- audience resolution in keyset pages: (app, user) and topic membership, both ordered by token
CREATE INDEX devices_by_user ON devices (app_id, user_id, token) WHERE user_id IS NOT NULL;
CREATE INDEX devices_by_topic ON devices USING gin (topics);

CREATE TABLE jobs (
    id          text        PRIMARY KEY,
    app_id      text        NOT NULL,
    state       text        NOT NULL CHECK (state IN ('queued', 'scheduled', 'running', 'done', 'failed', 'cancelled')),
    target_kind text        NOT NULL,
    targeted    bigint      NOT NULL DEFAULT 0,
    sent        bigint      NOT NULL DEFAULT 0,
    pruned      bigint      NOT NULL DEFAULT 0,
    failed      bigint      NOT NULL DEFAULT 0,
    expired     bigint      NOT NULL DEFAULT 0,
    retried     bigint      NOT NULL DEFAULT 0,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz
);

CREATE INDEX jobs_by_app_time ON jobs (app_id, created_at);

-- every pruned token, for the cleanup report
CREATE TABLE dead_tokens (
    id             bigserial   PRIMARY KEY,
    app_id         text        NOT NULL,
    token          text        NOT NULL,
    reason         text        NOT NULL,
    apns_timestamp timestamptz,
    job_id         text,
    recorded_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dead_tokens_by_app_time ON dead_tokens (app_id, recorded_at);

-- notifications that failed for a reason other than a dead token, for diagnosis
CREATE TABLE delivery_failures (
    id          bigserial   PRIMARY KEY,
    job_id      text        NOT NULL,
    app_id      text        NOT NULL,
    token       text        NOT NULL,
    status      integer,
    reason      text        NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX delivery_failures_by_job ON delivery_failures (job_id);
