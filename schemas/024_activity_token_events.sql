-- `token.pruned.<app>` says which pruned tokens were Live Activity tokens (schemas/020): `kind` (`push_to_start` or
-- `update`) and `activity` (its type or id) beside the token, so that a backend does not take a dead activity token
-- for a dead device. Device tokens' entries are unchanged (the keys are left out when null).
CREATE OR REPLACE FUNCTION herald_tokens_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (routing_key, body)
    SELECT 'token.pruned.' || p.app_id,
           jsonb_build_object('event', 'token.pruned', 'app', p.app_id, 'job', p.job_id,
                              'tokens', jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                                                      'token', p.token, 'reason', p.reason,
                                                      'kind', p.token_kind, 'activity', p.activity))
                                                  ORDER BY p.token))
    FROM inserted p
    WHERE EXISTS (SELECT 1 FROM event_apps e WHERE e.app_id = p.app_id)
    GROUP BY p.app_id, p.job_id;
    RETURN NULL;
END $$;
