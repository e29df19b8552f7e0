-- Retention (the workers' periodic removal of old records) deletes dead_tokens and delivery_failures rows by age
-- in chunks of 10,000, oldest first: these indexes make each chunk an index range scan instead of a walk of the
-- whole table. Finished jobs are found through jobs_by_time (created_at), so the hot jobs table gets no new index.
-- Building them blocks writes to the two tables (pruning and failure write-back) while they build.
CREATE INDEX dead_tokens_by_time ON dead_tokens (recorded_at);
CREATE INDEX delivery_failures_by_time ON delivery_failures (recorded_at);
