-- A job's counters are derived from its result rows when it is read, so they always equal what
-- was written, whichever worker wrote it and whenever it died: the accumulated copies go.
ALTER TABLE ingestion_jobs
  DROP COLUMN processed,
  DROP COLUMN successful,
  DROP COLUMN failed,
  DROP COLUMN skipped,
  DROP COLUMN entries_created,
  DROP COLUMN entries_updated,
  DROP COLUMN entries_skipped,
  DROP COLUMN entries_deleted,
  DROP COLUMN embeddings_generated;

-- The attempt limit counts attempts that made no progress: a worker killed after it wrote records
-- (a restart, a deploy) is not the job's fault. `results_at_claim` is the number of result rows
-- when the job was last claimed; the next claim compares it with the count then.
ALTER TABLE ingestion_jobs
  ADD COLUMN attempts_without_progress integer NOT NULL DEFAULT 0,
  ADD COLUMN results_at_claim integer NOT NULL DEFAULT 0;
