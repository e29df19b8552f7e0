-- Web Push subscriptions as devices (issue 37): platform `web`, whose token is the subscription's endpoint URL (the
-- device's identity: the key stays (app_id, token)), with the keys to encrypt for and the time the browser said the
-- subscription expires.
--
-- `web_keys` is `WebPushKeys.stored`: `<p256dh>.<auth>` in unpadded base64url (a 65-byte P-256 point, 87 characters;
-- a 16-byte secret, 22). `web_expires_at` is the subscription's `expirationTime` (NULL: the browser gave none). Both
-- are NULL unless the platform is web, and a web device always has its keys.
--
-- A web token is an https URL (any case in the scheme, as WebPushEndpoint reads it) without whitespace or fragment,
-- at most 2,048 bytes; the other platforms' rules are 033's, unchanged.
--
-- NULL never passes a check here (IS NOT NULL, IS NOT DISTINCT FROM): a CHECK lets a NULL result through. One ALTER
-- TABLE per table: the new columns have no default (nothing is rewritten), and the rows are read once to validate
-- all of the table's new constraints together.
ALTER TABLE devices
    ADD COLUMN IF NOT EXISTS web_keys text,
    ADD COLUMN IF NOT EXISTS web_expires_at timestamptz,
    DROP CONSTRAINT IF EXISTS devices_platform_check,
    DROP CONSTRAINT IF EXISTS devices_fcm_kind_check,
    DROP CONSTRAINT IF EXISTS devices_token_check,
    DROP CONSTRAINT IF EXISTS devices_web_check,
    ADD CONSTRAINT devices_platform_check CHECK (platform IN ('ios', 'android', 'web')),
    ADD CONSTRAINT devices_fcm_kind_check CHECK (
        (platform IN ('ios', 'web') AND fcm_kind IS NULL)
        OR (platform = 'android' AND fcm_kind IS NOT NULL AND fcm_kind IN ('token', 'fid'))),
    ADD CONSTRAINT devices_web_check CHECK (
        (platform IN ('ios', 'android') AND web_keys IS NULL AND web_expires_at IS NULL)
        OR (platform = 'web' AND web_keys IS NOT NULL AND web_keys ~ '^[A-Za-z0-9_-]{87}\.[A-Za-z0-9_-]{22}$')),
    ADD CONSTRAINT devices_token_check CHECK (
        (platform = 'ios' AND token ~ '^([0-9a-f]{2})+$' AND length(token) <= 400)
        OR (platform = 'android' AND fcm_kind IS NOT DISTINCT FROM 'token' AND token ~ '^[A-Za-z0-9_:-]+$'
            AND length(token) BETWEEN 20 AND 4096)
        OR (platform = 'android' AND fcm_kind IS NOT DISTINCT FROM 'fid' AND token ~ '^[c-f][A-Za-z0-9_-]{21}$')
        OR (platform = 'web' AND token ~* '^https://[^[:space:]#]+$' AND octet_length(token) <= 2048));

-- `herald devices expired`: an app's web subscriptions whose expirationTime has passed, by that time, in keyset pages
-- of (web_expires_at, token). Partial: only subscriptions with an expiration fill it (most browsers give none).
CREATE INDEX IF NOT EXISTS devices_web_by_expiry ON devices (app_id, web_expires_at, token)
    WHERE web_expires_at IS NOT NULL;

-- A dead-token record of a web subscription keeps its keys and expiration, for `herald devices restore` (which puts
-- the device back as it was). Records have no token rule of their own (033).
ALTER TABLE dead_tokens
    ADD COLUMN IF NOT EXISTS web_keys text,
    ADD COLUMN IF NOT EXISTS web_expires_at timestamptz,
    DROP CONSTRAINT IF EXISTS dead_tokens_platform_check,
    DROP CONSTRAINT IF EXISTS dead_tokens_fcm_kind_check,
    DROP CONSTRAINT IF EXISTS dead_tokens_web_check,
    ADD CONSTRAINT dead_tokens_platform_check CHECK (platform IN ('ios', 'android', 'web')),
    ADD CONSTRAINT dead_tokens_fcm_kind_check CHECK (
        (platform IN ('ios', 'web') AND fcm_kind IS NULL)
        OR (platform = 'android' AND fcm_kind IS NOT NULL AND fcm_kind IN ('token', 'fid'))),
    ADD CONSTRAINT dead_tokens_web_check CHECK (
        platform = 'web' OR (web_keys IS NULL AND web_expires_at IS NULL));

-- A web endpoint's origin as WebPushEndpoint.origin reads it: `https://host[:port]`, lowercase, without the port
-- when it is 443. NULL for anything that is not an https URL.
CREATE OR REPLACE FUNCTION herald_endpoint_origin(endpoint text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT regexp_replace(
               regexp_replace(lower(substring(endpoint FROM '^[Hh][Tt][Tt][Pp][Ss]://[^/?]+')), ':\+?0*([0-9]+)$',
                              ':\1'),
               ':443$', '')
$$;

-- `token.pruned.<app>` gives a web subscription's platform and its endpoint's origin (the push service), beside the
-- token (the endpoint). Entries keep their other keys; null ones are left out, as before (schemas/024, 033).
CREATE OR REPLACE FUNCTION herald_tokens_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (routing_key, body)
    SELECT 'token.pruned.' || p.app_id,
           jsonb_build_object('event', 'token.pruned', 'app', p.app_id, 'job', p.job_id,
                              'tokens', jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                                                      'token', p.token, 'reason', p.reason,
                                                      'platform', p.platform, 'fcm_kind', p.fcm_kind,
                                                      'endpoint_origin', CASE WHEN p.platform = 'web'
                                                          THEN herald_endpoint_origin(p.token) END,
                                                      'kind', p.token_kind, 'activity', p.activity))
                                                  ORDER BY p.token))
    FROM inserted p
    WHERE EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = p.app_id)
    GROUP BY p.app_id, p.job_id;
    RETURN NULL;
END $$;
