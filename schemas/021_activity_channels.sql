-- Live Activity broadcast channels (issue 19): the channels Herald created at Apple for an app, with what Apple
-- cannot tell us back cheaply or at all: the environment they were created in, the storage policy (Apple answers it
-- per channel, one request each), the operator's note and when the event ends (`Store+Channels.swift`,
-- `herald channels`, the API's channel routes).
--
-- Apple allows 10,000 channels per app and environment; Herald counts the rows of (app_id, environment) before it
-- asks Apple for another, and `herald channels gc` deletes the channels whose event has ended (`ends_at` passed),
-- at Apple and here. Channel ids are Apple's base64 text, never chosen by Herald; a channel lives in one
-- environment only.
CREATE TABLE activity_channels (
    app_id         text        NOT NULL,
    environment    text        NOT NULL CHECK (environment IN ('production', 'sandbox')),
    channel_id     text        NOT NULL CHECK (octet_length(channel_id) BETWEEN 1 AND 1024),
    -- `message-storage-policy`: 0 stores no message (broadcasts need apns-expiration 0), 1 the most recent one
    storage_policy smallint    NOT NULL CHECK (storage_policy IN (0, 1)),
    -- the operator's note
    label          text        CHECK (octet_length(label) <= 200 AND label !~ '[\x01-\x1f\x7f]'),
    -- when the event ends: after it the channel may be garbage-collected
    ends_at        timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, channel_id)
);

-- `herald channels gc`: the ended channels of an app.
CREATE INDEX activity_channels_ending ON activity_channels (app_id, ends_at) WHERE ends_at IS NOT NULL;
