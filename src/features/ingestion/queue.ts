import type { Db, Queryable } from '../../core/db/db.ts';

/** A job as a worker sees it once it holds the lease. */
export type ClaimedJob = {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  sourceId: string;
  adapterType: string;
  recordCount: number;
  /** Claims so far, this one included. */
  attempts: number;
  /** Claims since the last one that followed progress (see `claimJob`): what the attempt limit counts. */
  attemptsWithoutProgress: number;
  createdAt: Date;
  /** Files whose extraction was under way when an attempt's process died (see `claimJob`): they fail instead of being extracted again. */
  interruptedOrdinals: number[];
  /** The worker holding the lease: every write of the job is fenced with it. */
  workerId: string;
};

/**
 * Claims the oldest job that is pending, or processing under an expired lease (its worker died),
 * in one statement. `FOR NO KEY UPDATE SKIP LOCKED` lets any number of workers poll at once
 * without waiting on each other or claiming the same row; the lease, not the row lock, is what
 * keeps the job owned afterwards, so no transaction stays open while a job runs. It is NO KEY
 * UPDATE rather than UPDATE because a record's transaction holds a KEY SHARE lock on the job row
 * (the foreign key of its result row): with FOR UPDATE, a worker frozen inside such a transaction
 * would hide its job from every other worker until it woke, whatever its lease said.
 *
 * `attemptsWithoutProgress` restarts at 1 when the previous attempt wrote result rows. A file the
 * previous attempt was extracting when it ended (`extracting_ordinal`, see `markExtracting`) joins
 * `interrupted_ordinals`: only a process that died mid-file leaves one behind.
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
    attempts_without_progress: number;
    created_at: Date;
    interrupted_ordinals: number[];
  }>(
    `WITH next AS (
       SELECT id, workspace_id FROM ingestion_jobs
       WHERE status = 'pending' OR (status = 'processing' AND lease_expires_at < now())
       ORDER BY created_at, id
       LIMIT 1
       FOR NO KEY UPDATE SKIP LOCKED
     ), finished AS (
       SELECT count(*)::int AS results FROM ingestion_job_results, next
       WHERE ingestion_job_results.workspace_id = next.workspace_id AND ingestion_job_results.job_id = next.id
     )
     UPDATE ingestion_jobs AS job
     SET status = 'processing', lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
         attempts = job.attempts + 1,
         attempts_without_progress = CASE WHEN finished.results > job.results_at_claim THEN 1 ELSE job.attempts_without_progress + 1 END,
         results_at_claim = finished.results,
         interrupted_ordinals = CASE WHEN job.extracting_ordinal IS NULL THEN job.interrupted_ordinals
                                     ELSE array_append(job.interrupted_ordinals, job.extracting_ordinal) END,
         extracting_ordinal = NULL,
         started_at = COALESCE(job.started_at, now()), updated_at = now()
     FROM next, finished WHERE job.id = next.id
     RETURNING job.id, job.workspace_id, job.knowledge_base_id, job.source_id, job.adapter_type,
               job.record_count, job.attempts, job.attempts_without_progress, job.created_at, job.interrupted_ordinals`,
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
    attemptsWithoutProgress: row.attempts_without_progress,
    createdAt: row.created_at,
    interruptedOrdinals: row.interrupted_ordinals,
    workerId,
  };
}

/**
 * Expires the leases of every processing job at once. Only for the embedded engine at start-up:
 * one process owns a PGlite database, so a job still processing there was left by a process that
 * died, and waiting out its lease would only delay the resume.
 */
export async function releaseOrphanedJobs(db: Db): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET lease_expires_at = now() - interval '1 second'
     WHERE status = 'processing' AND lease_expires_at >= now()`,
  );
  return rowCount;
}

/**
 * Whether a job other than `job` is being processed under a live lease, in any workspace: like
 * `claimJob`, a question about the queue shared by every workspace. It reads the queue's partial
 * index of pending and processing jobs.
 */
export async function othersProcessing(db: Db, job: ClaimedJob): Promise<boolean> {
  const { rows } = await db.query<{ busy: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ingestion_jobs WHERE status = 'processing' AND lease_expires_at >= now() AND id <> $1) AS busy`,
    [job.id],
  );
  return rows[0]!.busy;
}

/**
 * Extends the lease. Returns false when the job is no longer this worker's to run: cancelled,
 * or taken over by another worker after this one stalled past its lease.
 */
export async function renewLease(db: Db, job: ClaimedJob, leaseSeconds: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET lease_expires_at = now() + make_interval(secs => $4)
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId, leaseSeconds],
  );
  return rowCount > 0;
}

/**
 * Records the file this worker is about to extract (`ordinal`), or that it is done with it (null).
 * Two small writes per document, 0.2-0.5 ms each, against the 60-110 ms a 20-page PDF takes.
 * Returns false when the job is no longer this worker's.
 */
export async function markExtracting(db: Db, job: ClaimedJob, ordinal: number | null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET extracting_ordinal = $4
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId, ordinal],
  );
  return rowCount > 0;
}

/**
 * Stores the time spent per stage, and whether this worker still holds the job (false when it
 * was cancelled or taken over). The counters need no writing: they are read from the result rows.
 */
export async function saveTimings(db: Db, job: ClaimedJob, timings: Record<string, number>): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET timings = $4::jsonb, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId, JSON.stringify(timings)],
  );
  return rowCount > 0;
}

/**
 * Whether `job` is still this worker's: processing under its lease. A write whose result row
 * was not inserted asks this to tell "another worker recorded it first" from "the job is lost".
 */
export async function holdsLease(db: Queryable, job: ClaimedJob): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId],
  );
  return rowCount > 0;
}

/** Marks the job completed (unless it was cancelled or taken over meanwhile). */
export async function completeJob(db: Db, job: ClaimedJob): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET status = 'completed', completed_at = now(), updated_at = now(),
       lease_owner = NULL, lease_expires_at = NULL
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId],
  );
}

/** Marks the job failed with `result.error` (an unrecoverable error). */
export async function failJob(db: Db, job: ClaimedJob, error: string): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET status = 'failed', error = $4, completed_at = now(), updated_at = now(),
       lease_owner = NULL, lease_expires_at = NULL
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId, error],
  );
}

/** Gives the job back at once (a graceful shutdown) so that another worker continues it now. */
export async function releaseJob(db: Db, job: ClaimedJob): Promise<void> {
  await db.query(
    `UPDATE ingestion_jobs SET lease_expires_at = now() - interval '1 second'
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'processing'`,
    [job.workspaceId, job.id, job.workerId],
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
