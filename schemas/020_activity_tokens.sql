-- Live Activity tokens (issue 19): the push-to-start token of a device for an activity type, and the update token of
-- a running activity on a device (`Store+ActivityTokens.swift`, the API's live-activities routes).
--
-- Both belong to a registered device: start jobs find push-to-start tokens through the device's user, topics and
-- locale, and a device's environment says where its activity tokens are sent. So each row references its device
-- with ON DELETE CASCADE: deleting a device (the API, a prune of the device's own token, a token replaced through
-- `old_token`, which deletes the old row) deletes its activity tokens. A replaced device's activity tokens are not
-- carried over to its new token: ActivityKit hands the app its tokens again at launch (pushToStartTokenUpdates,
-- pushTokenUpdates), and a new device token usually means a new install, whose old activity tokens are dead too.
-- The cascade costs a device delete one probe of each table's index led by (app_id, device_token): the start tokens'
-- primary key, and activity_update_tokens_by_device. A device insert or refresh costs nothing (only the referencing
-- side is checked on insert, and a refresh does not change the key).
--
-- `registered_at` is what the 410 timestamp rule compares against, as for devices; `registered_by` is the
-- register-only API key that registered the token (NULL for any other key), as devices.registered_by is.
-- Tokens are lowercase hex, as devices.token is; activity types and ids are 1 to 200 bytes without control
-- characters, as the API checks.

CREATE TABLE activity_start_tokens (
    app_id        text        NOT NULL,
    -- the device's ordinary APNs token, as in devices.token
    device_token  text        NOT NULL,
    -- the ActivityKit attributes type name
    activity_type text        NOT NULL
        CHECK (octet_length(activity_type) BETWEEN 1 AND 200 AND activity_type !~ '[\x01-\x1f\x7f]'),
    -- the push-to-start token
    token         text        NOT NULL CHECK (token ~ '^([0-9a-f]{2})+$' AND length(token) <= 400),
    registered_at timestamptz NOT NULL DEFAULT now(),
    registered_by bigint,
    PRIMARY KEY (app_id, device_token, activity_type),
    FOREIGN KEY (app_id, device_token) REFERENCES devices (app_id, token) ON DELETE CASCADE
);

-- pruning: a dead token names neither its device nor its activity type
CREATE INDEX activity_start_tokens_by_token ON activity_start_tokens (app_id, token);
-- start jobs: one activity type's tokens in device-token order (keyset pages), whatever the app's other types
CREATE INDEX activity_start_tokens_by_type ON activity_start_tokens (app_id, activity_type, device_token);

CREATE TABLE activity_update_tokens (
    app_id        text        NOT NULL,
    -- the app's own id of the activity: a delivery, a ride, a game (which many devices may follow)
    activity_id   text        NOT NULL
        CHECK (octet_length(activity_id) BETWEEN 1 AND 200 AND activity_id !~ '[\x01-\x1f\x7f]'),
    device_token  text        NOT NULL,
    -- the activity's update token on this device: registering again replaces it (the newest wins)
    token         text        NOT NULL CHECK (token ~ '^([0-9a-f]{2})+$' AND length(token) <= 400),
    registered_at timestamptz NOT NULL DEFAULT now(),
    registered_by bigint,
    PRIMARY KEY (app_id, activity_id, device_token),
    FOREIGN KEY (app_id, device_token) REFERENCES devices (app_id, token) ON DELETE CASCADE
);

-- pruning
CREATE INDEX activity_update_tokens_by_token ON activity_update_tokens (app_id, token);
-- the cascade of a device delete
CREATE INDEX activity_update_tokens_by_device ON activity_update_tokens (app_id, device_token);

-- A pruned activity token is recorded in dead_tokens like a device token, with what it was: `token_kind`
-- (`push_to_start` or `update`; NULL for a device token, as every record before this migration) and `activity`
-- (the activity type or id). Its user, locale, topics and environment are the owning device's; its registered_at
-- and badge stay NULL, since the record is not a device that `herald devices restore` could put back. Nullable
-- columns without a default rewrite no table.
ALTER TABLE dead_tokens
    ADD COLUMN token_kind text CHECK (token_kind IN ('push_to_start', 'update')),
    ADD COLUMN activity   text;
