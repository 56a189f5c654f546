-- The file a files job's worker is extracting (issue 34): a document that takes its whole process
-- down (a native crash, the system's out-of-memory killer) must not do it again at every resume
-- until the attempt limit, 45 minutes of outage for one upload. The worker records the ordinal
-- before it extracts and clears it after; the claim that resumes the job moves a recorded one to
-- interrupted_ordinals, and that file fails instead of being extracted again.
ALTER TABLE ingestion_jobs
  ADD COLUMN extracting_ordinal integer,
  ADD COLUMN interrupted_ordinals integer[] NOT NULL DEFAULT '{}';
