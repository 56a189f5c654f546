-- Webhooks (issue 12): a workspace's endpoints, the outbox of job events, and each delivery attempt.

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  description text NOT NULL DEFAULT '',
  enabled boolean NOT NULL DEFAULT true,
  -- Why lore disabled it (a delivery exhausted its retries, or the endpoint answered 410 Gone).
  disabled_reason text,
  -- Kept in clear: signing needs the key itself, as with any HMAC (Standard Webhooks, Svix).
  secret text NOT NULL,
  -- After a rotation the old secret also signs deliveries until it expires, so that a receiver
  -- can switch to the new one without rejecting a message meanwhile.
  previous_secret text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_listing ON webhook_endpoints (workspace_id, created_at DESC, id);

-- The outbox: one row per event and subscribed endpoint, written by the trigger below in the
-- transaction of the job's state change, so an event is never lost however a process dies.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event text NOT NULL,
  -- No foreign key: a delivery outlives its job (a deleted knowledge base takes its jobs along).
  job_id uuid NOT NULL,
  -- The job's fields and counters at the event, rendered into the payload when it is sent.
  snapshot jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  -- Attempts since it was last queued (a redelivery starts the retry schedule again).
  round_attempts integer NOT NULL DEFAULT 0,
  -- When a pending delivery is due; while an attempt runs, the end of that worker's lease.
  next_attempt_at timestamptz,
  lease_owner text,
  -- The event's time: the payload's `timestamp`.
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_listing ON webhook_deliveries (endpoint_id, created_at DESC, id);
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (endpoint_id, job_id, created_at);

CREATE TABLE webhook_delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  number integer NOT NULL,
  at timestamptz NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  PRIMARY KEY (delivery_id, number)
);

-- Writes the outbox rows of a job's state change: job.started (pending → processing),
-- job.completed / job.failed / job.cancelled, and job.progress while it processes: at most every
-- 5 seconds per endpoint and job, and only when more records are done than at the last one. The
-- snapshot takes the job's fields and its counters now (counted as job-results.ts's
-- countResults counts them), so a job.started delivered late still shows the job as it started.
-- Only the enabled, subscribed endpoints of the job's own workspace get a row.
CREATE FUNCTION webhook_job_events() RETURNS trigger LANGUAGE plpgsql AS $$
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
      'completed_at', NEW.completed_at),
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
    AND (job_event <> 'job.progress' OR (job_snapshot -> 'counts' ->> 'processed')::int > 0 AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.job_id = NEW.id AND d.event IN ('job.started', 'job.progress')
        AND (d.created_at > now() - interval '5 seconds' OR d.snapshot -> 'counts' -> 'processed' = job_snapshot -> 'counts' -> 'processed')));
  RETURN NULL;
END;
$$;

CREATE TRIGGER webhook_job_events AFTER UPDATE ON ingestion_jobs
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR NEW.status = 'processing')
  EXECUTE FUNCTION webhook_job_events();
