-- The small-job claim's existence check is planned on every call. With a generic plan (schemas/006, kept by
-- 010) the plan was made at a session's first claim and kept for the session's life: made while `jobs` was
-- (nearly) empty, every index ties, and PostgreSQL sometimes took `jobs_by_app_time`, walking every job of the app
-- for each claimed id: 39 ms a group instead of 0.6 ms, single-device jobs at 0.2-0.35x, in one run of three
-- (auto_explain, `herald bench pipeline --scenario jobs`). A custom plan sees the table's current size, so it
-- probes the primary key once the table is large; planning it costs about 0.2 ms a group (up to 256 jobs).
ALTER FUNCTION herald_claim_small_jobs(text[], text[], integer) SET plan_cache_mode = force_custom_plan;
