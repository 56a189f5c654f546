-- Files uploaded with a job of the files adapter (issue 12). The submit stores their bytes and
-- answers at once; the worker extracts their text later, off the request. The job's payload keeps
-- the manifest (names, sizes, detected formats, SHA-256); the bytes live here, one row per file,
-- `ordinal` being the file's position in that manifest (and its record's ordinal in the results).
CREATE TABLE ingestion_job_files (
  job_id uuid NOT NULL REFERENCES ingestion_jobs (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (job_id, ordinal)
);
CREATE INDEX ingestion_job_files_workspace ON ingestion_job_files (workspace_id);

-- The page of the document a chunk starts on (PDFs), so an answer's source can cite it.
ALTER TABLE chunks ADD COLUMN page integer;

-- A job that ends (completed, failed or cancelled) never runs again, so its uploaded files serve
-- nothing more: they go in the statement that ends it, whichever code path that is (the worker,
-- a cancel, a job failed after too many attempts). A workspace uploading 30 MB per job would
-- otherwise keep every byte forever.
CREATE FUNCTION drop_finished_job_files() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ingestion_job_files WHERE workspace_id = NEW.workspace_id AND job_id = NEW.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER drop_finished_job_files AFTER UPDATE OF status ON ingestion_jobs
  FOR EACH ROW
  WHEN (NEW.status IN ('completed', 'failed', 'cancelled') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION drop_finished_job_files();
