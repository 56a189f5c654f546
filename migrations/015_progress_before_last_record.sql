-- A job.progress event is news of a job still under way. After its last batch, a processing job
-- whose records are all processed is still updated (its timings, a lease renewal) before it is
-- completed; migration 010's function sent that update as a progress event showing every record
-- processed, a few milliseconds before job.completed said the same. The function is migration
-- 010's, with progress events sent only while some records are left.
CREATE OR REPLACE FUNCTION webhook_job_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  job_event text;
  job_snapshot jsonb;
BEGIN
  IF NEW.status = OLD.status THEN
    job_event := 'job.progress';
  ELSIF NEW.status = 'processing' THEN
    job_event := 'job.started';
  ELSE
    job_event := 'job.' || NEW.status;
  END IF;
  -- Every UPDATE of a processing job comes here (lease renewals, timings): without a subscribed
  -- endpoint that is due a progress event, it costs one indexed lookup.
  IF NOT EXISTS (
    SELECT 1 FROM webhook_endpoints e
    WHERE e.workspace_id = NEW.workspace_id AND e.enabled AND job_event = ANY (e.events)
      AND (job_event <> 'job.progress' OR NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.endpoint_id = e.id AND d.job_id = NEW.id AND d.event IN ('job.started', 'job.progress')
          AND d.created_at > now() - interval '5 seconds'))
  ) THEN
    RETURN NULL;
  END IF;
  SELECT jsonb_build_object(
    'job', jsonb_build_object(
      'id', NEW.id, 'status', NEW.status, 'knowledge_base_id', NEW.knowledge_base_id, 'source_id', NEW.source_id,
      'adapter_type', NEW.adapter_type, 'adapter_id', NEW.adapter_id, 'record_count', NEW.record_count,
      'timings', NEW.timings, 'error', NEW.error, 'created_at', NEW.created_at, 'started_at', NEW.started_at,
      'completed_at', NEW.completed_at, 'file_name', NEW.file_name, 'retry_of', NEW.retry_of),
    'counts', jsonb_build_object(
      'processed', count(*),
      'successful', count(*) FILTER (WHERE r.status IN ('success', 'deleted')),
      'failed', count(*) FILTER (WHERE r.status = 'failed'),
      'skipped', count(*) FILTER (WHERE r.status = 'skipped'),
      'created', count(*) FILTER (WHERE r.action = 'created'),
      'updated', count(*) FILTER (WHERE r.action = 'updated'),
      'deleted', count(*) FILTER (WHERE r.status = 'deleted'),
      'embeddings', coalesce(sum(r.embedding_count), 0)))
  INTO job_snapshot
  FROM ingestion_job_results r WHERE r.workspace_id = NEW.workspace_id AND r.job_id = NEW.id;
  INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event, job_id, snapshot, next_attempt_at)
  SELECT e.workspace_id, e.id, job_event, NEW.id, job_snapshot, now()
  FROM webhook_endpoints e
  WHERE e.workspace_id = NEW.workspace_id AND e.enabled AND job_event = ANY (e.events)
    AND (job_event <> 'job.progress' OR (job_snapshot -> 'counts' ->> 'processed')::int BETWEEN 1 AND NEW.record_count - 1 AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.job_id = NEW.id AND d.event IN ('job.started', 'job.progress')
        AND (d.created_at > now() - interval '5 seconds' OR d.snapshot -> 'counts' -> 'processed' = job_snapshot -> 'counts' -> 'processed')));
  RETURN NULL;
END;
$$;
