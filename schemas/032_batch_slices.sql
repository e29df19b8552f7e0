-- A batch's outcomes are committed in slices as its answers arrive (issue 35): a worker that dies re-sends at most
-- the slice it had not committed, not the whole batch. Each slice's commit (`Store.commitSlice`) records how far
-- the batch got and the transient failures held for its retry; a redelivered batch skips what was committed.
--   settled          devices of the batch whose outcome is committed;
--   settled_through  the last of them, for a batch read from the audience (its devices are read in token order,
--                    and a pruned one is not read again, so a position would not do);
--   held_retries     the tokens that failed transiently in committed slices: the batch's retry sends them.
-- The batch's own counts (sent, failed, pruned, retried, expired) now add up over its slices. Additive: a worker of
-- the previous release ignores the columns and commits a batch whole, as before.
ALTER TABLE batches
    ADD COLUMN settled integer NOT NULL DEFAULT 0 CHECK (settled >= 0),
    ADD COLUMN settled_through text,
    ADD COLUMN held_retries text[] NOT NULL DEFAULT '{}';
