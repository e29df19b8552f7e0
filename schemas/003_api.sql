-- The HTTP API: per-app API keys (only their SHA-256 is stored) and the lookups reports and exports need.

CREATE TABLE api_keys (
    id          bigserial   PRIMARY KEY,
    app_id      text        NOT NULL,
    -- lowercase hex SHA-256 of the whole key; the key itself is shown once and never stored
    key_hash    text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    -- the first characters of the key, so that an operator can tell keys apart in `herald keys list`
    key_prefix  text        NOT NULL,
    label       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

CREATE INDEX api_keys_by_app ON api_keys (app_id) WHERE revoked_at IS NULL;

-- `herald report jobs --since`: recent jobs of every app
CREATE INDEX jobs_by_time ON jobs (created_at);
