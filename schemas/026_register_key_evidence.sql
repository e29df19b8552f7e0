-- Keys an app can carry (issue 32): what a register-only key (the one embedded in an app, so anyone's) registers is
-- not evidence against the app, and it is held to quotas.
--
-- `devices.delivered_at`: when APNs first accepted a notification for the device (set by the batch write-back, only
-- for the devices below). A device is *unproven* while it was registered by a register-only key
-- (`registered_by`, schemas/015) and never delivered to: anyone holding the app's key could have made it up. The
-- prune breaker counts no answer of an unproven device, and an unproven device answered BadDeviceToken or
-- DeviceTokenNotForTopic is pruned (restorable, schemas/008) without stopping the job. Devices registered by any
-- other key or imported (`registered_by` NULL) are evidence from the backend, as every device was before. Devices
-- registered by register-only keys before this migration start unproven: the next delivery proves the real ones.
-- Adding a nullable column without a default rewrites no table.
ALTER TABLE devices ADD COLUMN delivered_at timestamptz;

-- The unproven devices, and only those: what the write-back probes to mark first deliveries (a probe per delivered
-- device into an index that holds only never-delivered devices of register keys, usually few) and what settlement
-- reads when a batch has a suspect answer.
CREATE INDEX devices_unproven ON devices (app_id, token) WHERE registered_by IS NOT NULL AND delivered_at IS NULL;

-- Answers of unproven devices a job's batches had (whatever they were, except a delivery): left out of the prune
-- breaker's running count (`sent + pruned + failed - unproven_answers`).
ALTER TABLE jobs ADD COLUMN unproven_answers bigint NOT NULL DEFAULT 0;

-- Per-key quotas of register-only keys, NULL taking the API's configured default: new devices a key may register
-- per hour (every API process together), and Live Activity update tokens per device.
ALTER TABLE api_keys ADD COLUMN devices_per_hour integer CHECK (devices_per_hour BETWEEN 0 AND 100000000);
ALTER TABLE api_keys ADD COLUMN activity_tokens_per_device integer
    CHECK (activity_tokens_per_device BETWEEN 0 AND 100000);

-- The hourly counters behind `devices_per_hour`: one row per key and hour, bumped by an upsert in the transaction
-- that creates the device (so every API process counts in the same row), and the key's older rows removed when a
-- new hour's row is made.
CREATE TABLE api_key_usage (
    key_id  bigint      NOT NULL,
    hour    timestamptz NOT NULL,
    devices integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, hour)
);
