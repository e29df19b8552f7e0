-- The existence check of `herald_claim_small_jobs` (schemas/005) was planned again on every call: PL/pgSQL's plan
-- cache keeps custom plans for `id = ANY(ids)`, and estimating the selectivity of a custom plan looks at each of
-- the group's ids (up to a few hundred). Its plan is the same primary-key probe whatever the ids, so the generic
-- plan is kept. Measured with `herald bench pipeline --scenario jobs`: planning fell from about 8 % of
-- PostgreSQL's CPU to about 4 %.
ALTER FUNCTION herald_claim_small_jobs(text[], integer) SET plan_cache_mode = force_generic_plan;
