-- API keys get scopes and a rate of their own; devices remember the register-only key that registered them.
--
-- `scopes`: what a key may do (register, send, read, admin; admin is every scope). Keys made before this migration
-- could do everything for their app, so they keep `admin`. `requests_per_second`: the key's API rate limit in each
-- API process (none when NULL). `devices.registered_by`: the id of the register-only key that registered the device,
-- the only kind of key limited to its own devices; NULL for a device registered by any other key or imported.
-- Adding nullable columns without a default rewrites no table.
ALTER TABLE api_keys ADD COLUMN scopes text[] NOT NULL DEFAULT '{admin}'
    CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['register', 'send', 'read', 'admin']);
ALTER TABLE api_keys ADD COLUMN requests_per_second integer CHECK (requests_per_second BETWEEN 1 AND 1000000);
ALTER TABLE devices ADD COLUMN registered_by bigint;
