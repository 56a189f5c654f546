import type { Db, Queryable } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { Adapter } from './adapters/adapter.ts';
import type { Job, JobStatus, RecordResult } from './jobs.schemas.ts';

type JobRow = {
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  source_id: string;
  adapter_type: string;
  adapter_id: string;
  status: JobStatus;
  record_count: number;
  timings: Record<string, number>;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  payload?: unknown;
};

type ResultRow = {
  job_id: string;
  record_id: string;
  status: RecordResult['status'];
  action: 'created' | 'updated' | null;
  reason: string | null;
  entry_id: string | null;
  embedding_count: number;
  error: string | null;
};

const jobColumns = `id, workspace_id, knowledge_base_id, source_id, adapter_type, adapter_id, status, record_count,
  timings, error, created_at, started_at, completed_at`;

function toResult(row: ResultRow): RecordResult {
  return {
    sourceId: row.record_id,
    status: row.status,
    entryId: row.entry_id,
    embeddingCount: row.embedding_count,
    ...(row.action ? { action: row.action } : {}),
    ...(row.reason ? { reason: row.reason } : {}),
    ...(row.reason === 'duplicate' && row.entry_id ? { duplicateOf: row.entry_id } : {}),
    ...(row.error ? { error: row.error } : {}),
  };
}

/** A job's counters, from its result rows. */
type Counts = {
  processed: number;
  successful: number;
  failed: number;
  skipped: number;
  created: number;
  updated: number;
  deleted: number;
  embeddings: number;
};

/**
 * Counts the results. The counters are never stored: derived from the rows that each record's
 * own transaction wrote, they always equal the stored data, whichever worker wrote it, and
 * however many died on the way; and they only grow while the job runs.
 */
function countResults(results: RecordResult[]): Counts {
  const counts: Counts = { processed: results.length, successful: 0, failed: 0, skipped: 0, created: 0, updated: 0, deleted: 0, embeddings: 0 };
  for (const result of results) {
    counts.embeddings += result.embeddingCount;
    if (result.status === 'failed') counts.failed += 1;
    else if (result.status === 'skipped') counts.skipped += 1;
    else counts.successful += 1;
    if (result.status === 'deleted') counts.deleted += 1;
    if (result.action === 'created') counts.created += 1;
    if (result.action === 'updated') counts.updated += 1;
  }
  return counts;
}

/** Throughput so far and the time left at that rate; null unless the job is processing. */
function eta(row: JobRow, processed: number): Job['data']['eta'] {
  if (row.status !== 'processing' || !row.started_at || processed === 0) return null;
  const seconds = Math.max((Date.now() - row.started_at.getTime()) / 1000, 0.001);
  const recordsPerSecond = processed / seconds;
  return {
    recordsPerSecond: Math.round(recordsPerSecond * 10) / 10,
    secondsRemaining: Math.round(((row.record_count - processed) / recordsPerSecond) * 10) / 10,
  };
}

function toJob(row: JobRow, results: RecordResult[], includePayload: boolean): Job {
  const counts = countResults(results);
  return {
    id: row.id,
    status: row.status,
    data: {
      adapterId: row.adapter_id,
      adapterType: row.adapter_type,
      knowledgeBaseId: row.knowledge_base_id,
      recordCount: row.record_count,
      progress: {
        processed: counts.processed,
        total: row.record_count,
        successful: counts.successful,
        failed: counts.failed,
        skipped: counts.skipped,
      },
      eta: eta(row, counts.processed),
      timings: row.timings,
      results,
    },
    result: {
      sourceId: row.source_id,
      entriesCreated: counts.created,
      entriesUpdated: counts.updated,
      entriesSkipped: counts.skipped,
      entriesDeleted: counts.deleted,
      entriesFailed: counts.failed,
      embeddingsGenerated: counts.embeddings,
      ...(row.error ? { error: row.error } : {}),
    },
    ...(includePayload ? { payload: row.payload } : {}),
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

async function resultsOf(db: Queryable, workspaceId: string, jobIds: string[]): Promise<Map<string, RecordResult[]>> {
  const byJob = new Map<string, RecordResult[]>(jobIds.map((id) => [id, []]));
  if (jobIds.length === 0) return byJob;
  const { rows } = await db.query<ResultRow>(
    `SELECT job_id, record_id, status, action, reason, entry_id, embedding_count, error
     FROM ingestion_job_results WHERE workspace_id = $1 AND job_id = ANY($2::uuid[])
     ORDER BY job_id, ordinal`,
    [workspaceId, jobIds],
  );
  for (const row of rows) byJob.get(row.job_id)?.push(toResult(row));
  return byJob;
}

/** The data source of a knowledge base for an adapter, created on first use. */
async function ensureSource(db: Queryable, workspaceId: string, knowledgeBaseId: string, adapter: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO data_sources (workspace_id, knowledge_base_id, adapter) VALUES ($1, $2, $3)
     ON CONFLICT (knowledge_base_id, adapter) DO UPDATE SET adapter = EXCLUDED.adapter
     RETURNING id`,
    [workspaceId, knowledgeBaseId, adapter],
  );
  return rows[0]!.id;
}

/** Queues a job for a validated payload; answers at once, the worker does the rest. */
export async function submitJob(
  db: Db,
  input: { workspaceId: string; knowledgeBaseId: string; adapter: Adapter; adapterType: string; data: unknown; payloadText?: string },
): Promise<{ jobId: string; status: 'pending' }> {
  const sourceId = await ensureSource(db, input.workspaceId, input.knowledgeBaseId, input.adapter.name);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO ingestion_jobs (workspace_id, knowledge_base_id, source_id, adapter_type, adapter_id, record_count, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING id`,
    [
      input.workspaceId,
      input.knowledgeBaseId,
      sourceId,
      input.adapterType,
      `${input.adapter.name}@${input.adapter.version}`,
      input.adapter.count(input.data),
      input.payloadText ?? JSON.stringify(input.data),
    ],
  );
  return { jobId: rows[0]!.id, status: 'pending' };
}

export type JobFilter = {
  status?: JobStatus;
  limit: number;
  offset: number;
  includePayload: boolean;
  startDate?: string;
  endDate?: string;
};

/** A workspace's jobs, newest first. */
export async function listJobs(db: Db, workspaceId: string, filter: JobFilter): Promise<{ total: number; jobs: Job[] }> {
  const where = `workspace_id = $1 AND ($2::text IS NULL OR status = $2)
    AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)`;
  const values = [workspaceId, filter.status ?? null, filter.startDate ?? null, filter.endDate ?? null];
  const [{ rows }, count] = await Promise.all([
    db.query<JobRow>(
      `SELECT ${jobColumns}${filter.includePayload ? ', payload' : ''} FROM ingestion_jobs WHERE ${where}
       ORDER BY created_at DESC, id LIMIT $5 OFFSET $6`,
      [...values, filter.limit, filter.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM ingestion_jobs WHERE ${where}`, values),
  ]);
  const results = await resultsOf(db, workspaceId, rows.map((row) => row.id));
  return {
    total: count.rows[0]!.total,
    jobs: rows.map((row) => toJob(row, results.get(row.id) ?? [], filter.includePayload)),
  };
}

export async function getJob(db: Db, workspaceId: string, jobId: string, includePayload: boolean): Promise<Job> {
  const { rows } = await db.query<JobRow>(
    `SELECT ${jobColumns}${includePayload ? ', payload' : ''} FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, jobId],
  );
  const row = rows[0];
  if (!row) throw notFound('Ingestion job', jobId);
  const results = await resultsOf(db, workspaceId, [jobId]);
  return toJob(row, results.get(jobId) ?? [], includePayload);
}

/**
 * Cancels a pending or processing job: it becomes `cancelled` at once (a terminal state), the
 * worker stops before its next batch, and what was written stays. 409 for a finished job.
 */
export async function cancelJob(db: Db, workspaceId: string, jobId: string): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET status = 'cancelled', completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status IN ('pending', 'processing')`,
    [workspaceId, jobId],
  );
  if (rowCount > 0) return;
  const { rows } = await db.query<{ status: JobStatus }>('SELECT status FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2', [workspaceId, jobId]);
  if (!rows[0]) throw notFound('Ingestion job', jobId);
  throw new AppError('CONFLICT', `The job is already ${rows[0].status}; only pending or processing jobs can be cancelled.`);
}
