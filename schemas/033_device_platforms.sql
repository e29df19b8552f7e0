-- Devices have a platform (issue 36): `ios` (an APNs device token, as every device before this migration) or
-- `android` (an FCM registration token, or a Firebase Installation ID: `fcm_kind` says which, and a message targets
-- the matching field of FCM's Message resource). NULL `fcm_kind` for iOS, `token` or `fid` for Android.
--
-- The token's rule is now its platform's (DeviceAddress in HeraldCore, FCMTarget in FCMCore), replacing 001's
-- hex-only `devices_token_check`: iOS 1 to 200 bytes of lowercase hex; an Android registration token 20 to 4096
-- characters of A-Z a-z 0-9 _ : -; an FID 22 base64url characters, the first one of c d e f. The key stays
-- (app_id, token): a token is one device of an app whatever its platform.
--
-- NULL never passes a check here (IS NOT NULL, IS NOT DISTINCT FROM): a CHECK lets a NULL result through.
--
-- One ALTER TABLE per table: columns with a constant default rewrite nothing (the default is kept in the catalog),
-- and the table's rows are read once to validate all of its new constraints together.
ALTER TABLE devices
    ADD COLUMN IF NOT EXISTS platform text NOT NULL DEFAULT 'ios',
    ADD COLUMN IF NOT EXISTS fcm_kind text,
    DROP CONSTRAINT IF EXISTS devices_platform_check,
    DROP CONSTRAINT IF EXISTS devices_fcm_kind_check,
    DROP CONSTRAINT IF EXISTS devices_token_check,
    ADD CONSTRAINT devices_platform_check CHECK (platform IN ('ios', 'android')),
    ADD CONSTRAINT devices_fcm_kind_check CHECK (
        (platform = 'ios' AND fcm_kind IS NULL)
        OR (platform = 'android' AND fcm_kind IS NOT NULL AND fcm_kind IN ('token', 'fid'))),
    ADD CONSTRAINT devices_token_check CHECK (
        (platform = 'ios' AND token ~ '^([0-9a-f]{2})+$' AND length(token) <= 400)
        OR (platform = 'android' AND fcm_kind IS NOT DISTINCT FROM 'token' AND token ~ '^[A-Za-z0-9_:-]+$'
            AND length(token) BETWEEN 20 AND 4096)
        OR (platform = 'android' AND fcm_kind IS NOT DISTINCT FROM 'fid' AND token ~ '^[c-f][A-Za-z0-9_-]{21}$'));

-- `herald devices stale`: an app's Android devices by registration time, oldest first (FCM expires a token not
-- refreshed for 270 days), in keyset pages of (registered_at, token). Partial: iOS devices, which have no such
-- rule, neither fill nor update it.
CREATE INDEX IF NOT EXISTS devices_android_by_registration ON devices (app_id, registered_at, token)
    WHERE platform = 'android';

-- A dead-token record keeps the device's platform and kind, for the report and for `herald devices restore` (which
-- puts the device back as it was). Records before this migration are iOS, as their devices were. dead_tokens.token
-- has no rule of its own: it holds what a device or Live Activity token table held.
ALTER TABLE dead_tokens
    ADD COLUMN IF NOT EXISTS platform text NOT NULL DEFAULT 'ios',
    ADD COLUMN IF NOT EXISTS fcm_kind text,
    DROP CONSTRAINT IF EXISTS dead_tokens_platform_check,
    DROP CONSTRAINT IF EXISTS dead_tokens_fcm_kind_check,
    ADD CONSTRAINT dead_tokens_platform_check CHECK (platform IN ('ios', 'android')),
    ADD CONSTRAINT dead_tokens_fcm_kind_check CHECK (
        (platform = 'ios' AND fcm_kind IS NULL)
        OR (platform = 'android' AND fcm_kind IS NOT NULL AND fcm_kind IN ('token', 'fid')));

-- `token.pruned.<app>` names each token's platform (and, for Android, its kind), so that a backend knows which of
-- its records the token was. Entries keep their other keys; null ones are left out, as before (schemas/024).
CREATE OR REPLACE FUNCTION herald_tokens_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (routing_key, body)
    SELECT 'token.pruned.' || p.app_id,
           jsonb_build_object('event', 'token.pruned', 'app', p.app_id, 'job', p.job_id,
                              'tokens', jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                                                      'token', p.token, 'reason', p.reason,
                                                      'platform', p.platform, 'fcm_kind', p.fcm_kind,
                                                      'kind', p.token_kind, 'activity', p.activity))
                                                  ORDER BY p.token))
    FROM inserted p
    WHERE EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = p.app_id)
    GROUP BY p.app_id, p.job_id;
    RETURN NULL;
END $$;
