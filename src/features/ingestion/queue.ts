import type { Db } from '../../core/db/db.ts';

/** A job as a worker sees it once it holds the lease. */
export type ClaimedJob = {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  sourceId: string;
  adapterType: string;
  recordCount: number;
  attempts: number;
  createdAt: Date;
};

/**
 * Claims the oldest job that is pending, or processing under an expired lease (its worker died),
 * in one statement. `FOR UPDATE SKIP LOCKED` lets any number of workers poll at once without
 * waiting on each other or claiming the same row; the lease, not the row lock, is what keeps the
 * job owned afterwards, so no transaction stays open while a job runs.
 *
 * This is the one statement that reads across workspaces: workers serve every workspace. Every
 * statement after the claim filters by the job's workspace.
 */
export async function claimJob(db: Db, workerId: string, leaseSeconds: number): Promise<ClaimedJob | undefined> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    knowledge_base_id: string;
    source_id: string;
    adapter_type: string;
    record_count: number;
    attempts: number;
    created_at: Date;
  }>(
    `WITH next AS (
       SELECT id FROM ingestion_jobs
       WHERE status = 'pending' OR (status = 'processing' AND lease_expires_at < now())
       ORDER BY created_at, id
       LIMIT 1
       FOR UPDATE SKIP LOCKED
     )
     UPDATE ingestion_jobs AS job
     SET status = 'processing', lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
         attempts = job.attempts + 1, started_at = COALESCE(job.started_at, now()), updated_at = now()
     FROM next WHERE job.id = next.id
     RETURNING job.id, job.workspace_id, job.knowledge_base_id, job.source_id, job.adapter_type,
               job.record_count, job.attempts, job.created_at`,
    [workerId, leaseSeconds],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    knowledgeBaseId: row.knowledge_base_id,
    sourceId: row.source_id,
    adapterType: row.adapter_type,
    recordCount: row.record_count,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
}

/**
 * Extends the lease. Returns false when the job is no longer this worker's to run: cancelled,
 * or taken over by another worker after this one stalled past its lease.
 */
export async function renewLease(db: Db, job: ClaimedJob, workerId: string, leaseSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET lease_expires_at = now() + make_interval(secs => $4)
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, workerId, leaseSeconds],
  );
  return rowCount > 0;
}

/** Counter increments of one batch. */
export type Tally = {
  processed: number;
  successful: number;
  failed: number;
  skipped: number;
  created: number;
  updated: number;
  entriesSkipped: number;
  deleted: number;
  embeddings: number;
};

export function emptyTally(): Tally {
  return { processed: 0, successful: 0, failed: 0, skipped: 0, created: 0, updated: 0, entriesSkipped: 0, deleted: 0, embeddings: 0 };
}

/**
 * Adds a batch's counts and timings to the job row. Never changes the status, so a job cancelled
 * meanwhile stays cancelled and still shows what was written before the worker stopped.
 */
export async function addProgress(db: Db, job: ClaimedJob, tally: Tally, timings: Record<string, number>): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET
       processed = processed + $3, successful = successful + $4, failed = failed + $5, skipped = skipped + $6,
       entries_created = entries_created + $7, entries_updated = entries_updated + $8,
       entries_skipped = entries_skipped + $9, entries_deleted = entries_deleted + $10,
       embeddings_generated = embeddings_generated + $11, timings = $12::jsonb, updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    [
      job.workspaceId,
      job.id,
      tally.processed,
      tally.successful,
      tally.failed,
      tally.skipped,
      tally.created,
      tally.updated,
      tally.entriesSkipped,
      tally.deleted,
      tally.embeddings,
      JSON.stringify(timings),
    ],
  );
}

/**
 * Recomputes the counters from the result rows. A worker that died may have committed records
 * after its last progress update; the job's next worker starts from the truth.
 */
export async function recount(db: Db, job: ClaimedJob): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs AS job SET
       processed = counts.processed, successful = counts.successful, failed = counts.failed,
       skipped = counts.skipped, entries_created = counts.created, entries_updated = counts.updated,
       entries_skipped = counts.skipped, entries_deleted = counts.deleted, embeddings_generated = counts.embeddings
     FROM (
       SELECT count(*)::int AS processed,
              count(*) FILTER (WHERE status IN ('success', 'deleted'))::int AS successful,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
              count(*) FILTER (WHERE action = 'created')::int AS created,
              count(*) FILTER (WHERE action = 'updated')::int AS updated,
              count(*) FILTER (WHERE status = 'deleted')::int AS deleted,
              COALESCE(sum(embedding_count), 0)::int AS embeddings
       FROM ingestion_job_results WHERE workspace_id = $1 AND job_id = $2
     ) AS counts
     WHERE job.workspace_id = $1 AND job.id = $2`,
    [job.workspaceId, job.id],
  );
}

/** Marks the job completed (unless it was cancelled or taken over meanwhile). */
export async function completeJob(db: Db, job: ClaimedJob, workerId: string): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET status = 'completed', completed_at = now(), updated_at = now(),
       lease_owner = NULL, lease_expires_at = NULL
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, workerId],
  );
}

/** Marks the job failed with `result.error` (an unrecoverable error). */
export async function failJob(db: Db, job: ClaimedJob, workerId: string, error: string): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET status = 'failed', error = $4, completed_at = now(), updated_at = now(),
       lease_owner = NULL, lease_expires_at = NULL
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, workerId, error],
  );
}

/** Gives the job back at once (a graceful shutdown) so that another worker continues it now. */
export async function releaseJob(db: Db, job: ClaimedJob, workerId: string): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET lease_expires_at = now() - interval '1 second'
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, workerId],
  );
}

/** Reads the payload of a claimed job. */
export async function jobPayload(db: Db, job: ClaimedJob): Promise<unknown> {
  const { rows } = await db.query<{ payload: unknown }>('SELECT payload FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2', [job.workspaceId, job.id]);
  return rows[0]?.payload;
}

/** The ordinals of the records this job has already finished (the resume point). */
export async function finishedOrdinals(db: Db, job: ClaimedJob): Promise<Set<number>> {
  const { rows } = await db.query<{ ordinal: number }>(
    'SELECT ordinal FROM ingestion_job_results WHERE workspace_id = $1 AND job_id = $2',
    [job.workspaceId, job.id],
  );
  return new Set(rows.map((row) => row.ordinal));
}
