-- Small jobs are started and completed in groups, a batch row each: the foreign key from batches to jobs cost a
-- lookup trigger per inserted batch (about a fifth of the database time of a small job), and its cached plan was
-- made when the jobs table was small (a fresh install) and scanned the table as it grew. Batches are only ever
-- created for a job that exists (`beginBatch` checks, the others run after the job row is written), and purging a
-- job removes its batches in the same statement.
ALTER TABLE batches DROP CONSTRAINT batches_job_id_fkey;
