import type { Db, Queryable } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { allowedKnowledgeBases, knowledgeBaseAllowed, type Reach } from '../auth/reach.ts';
import type { Adapter } from './adapters/adapter.ts';
import { findAdapter } from './adapters/registry.ts';
import { jobJson, jobsPageJson, joined, type JobRow } from './job-body.ts';
import { insertJobFiles } from './job-files.ts';
import { jobResults, resultsVersionSql, type JobResultsCache } from './job-results.ts';
import type { JobStatus } from './jobs.schemas.ts';

const jobColumns = `j.id, j.workspace_id, j.knowledge_base_id, j.source_id, j.adapter_type, j.adapter_id, j.status, j.record_count,
  j.file_name, j.retry_of, j.timings, j.error, j.created_at, j.started_at, j.completed_at, ${resultsVersionSql}`;

/** The payload column, as JSON text: a payload of up to 30 MB goes out as stored, never parsed. */
const payloadColumn = (includePayload: boolean) => (includePayload ? ', j.payload::text AS payload' : '');

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

/** Queues a job for a validated payload (and its uploaded files, files adapter); answers at once, the worker does the rest. */
export async function submitJob(
  db: Db,
  input: {
    workspaceId: string;
    knowledgeBaseId: string;
    adapter: Adapter;
    adapterType: string;
    data: unknown;
    payloadText?: string;
    files?: Buffer[];
    /** Migration 010's columns. */
    fileName?: string | null;
    retryOf?: string;
  },
): Promise<{ jobId: string; status: 'pending' }> {
  const sourceId = await ensureSource(db, input.workspaceId, input.knowledgeBaseId, input.adapter.name);
  const insert = async (tx: Queryable) => {
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO ingestion_jobs (workspace_id, knowledge_base_id, source_id, adapter_type, adapter_id, record_count, payload, file_name, retry_of)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9) RETURNING id`,
      [
        input.workspaceId,
        input.knowledgeBaseId,
        sourceId,
        input.adapterType,
        `${input.adapter.name}@${input.adapter.version}`,
        input.adapter.count(input.data),
        input.payloadText ?? JSON.stringify(input.data),
        input.fileName ?? null,
        input.retryOf ?? null,
      ],
    );
    return rows[0]!.id;
  };
  const { files } = input;
  if (!files || files.length === 0) return { jobId: await insert(db), status: 'pending' };
  // The job and its files commit together: a worker never claims a job whose files are missing.
  const jobId = await db.transaction(async (tx) => {
    const id = await insert(tx);
    await insertJobFiles(tx, input.workspaceId, id, files);
    return id;
  });
  return { jobId, status: 'pending' };
}

export type JobFilter = {
  status?: JobStatus;
  limit: number;
  offset: number;
  includePayload: boolean;
  startDate?: string;
  endDate?: string;
};

/** A workspace's jobs (of the knowledge bases within reach), newest first: the JSON of `{total, jobs}`. */
export async function listJobs(db: Db, cache: JobResultsCache, reach: Reach, filter: JobFilter): Promise<Buffer> {
  const where = `j.workspace_id = $1 AND ($2::text IS NULL OR j.status = $2)
    AND ($3::timestamptz IS NULL OR j.created_at >= $3) AND ($4::timestamptz IS NULL OR j.created_at < $4)
    AND ${knowledgeBaseAllowed('j.knowledge_base_id', 5)}`;
  const values = [reach.workspaceId, filter.status ?? null, filter.startDate ?? null, filter.endDate ?? null, allowedKnowledgeBases(reach)];
  const [{ rows }, count] = await Promise.all([
    db.query<JobRow>(
      `SELECT ${jobColumns}${payloadColumn(filter.includePayload)} FROM ingestion_jobs j WHERE ${where}
       ORDER BY j.created_at DESC, j.id LIMIT $6 OFFSET $7`,
      [...values, filter.limit, filter.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM ingestion_jobs j WHERE ${where}`, values),
  ]);
  const results = await jobResults(db, cache, reach.workspaceId, rows);
  return joined(jobsPageJson(count.rows[0]!.total, rows.map((row) => jobJson(row, results.get(row.id)!))));
}

/**
 * One job's JSON; 404 for a job of another workspace or of a knowledge base out of reach. The
 * job's row and the version of its results are one statement; the results are read again only
 * when that version is not the one this process has serialized.
 */
export async function getJob(db: Db, cache: JobResultsCache, reach: Reach, jobId: string, includePayload: boolean): Promise<Buffer> {
  const { rows } = await db.query<JobRow>(
    `SELECT ${jobColumns}${payloadColumn(includePayload)} FROM ingestion_jobs j
     WHERE j.workspace_id = $1 AND j.id = $2 AND ${knowledgeBaseAllowed('j.knowledge_base_id', 3)}`,
    [reach.workspaceId, jobId, allowedKnowledgeBases(reach)],
  );
  const row = rows[0];
  if (!row) throw notFound('Ingestion job', jobId);
  const results = await jobResults(db, cache, reach.workspaceId, [row]);
  return joined(jobJson(row, results.get(jobId)!));
}

/**
 * Cancels a pending or processing job: it becomes `cancelled` at once (a terminal state), the
 * worker stops before its next batch, and what was written stays. 409 for a finished job; 404 for
 * one of a knowledge base out of reach, whatever its state.
 */
export async function cancelJob(db: Db, reach: Reach, jobId: string): Promise<void> {
  const within = knowledgeBaseAllowed('knowledge_base_id', 3);
  const values = [reach.workspaceId, jobId, allowedKnowledgeBases(reach)];
  const { rowCount } = await db.query(
    `UPDATE ingestion_jobs SET status = 'cancelled', completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND ${within} AND status IN ('pending', 'processing')`,
    values,
  );
  if (rowCount > 0) return;
  const { rows } = await db.query<{ status: JobStatus }>(`SELECT status FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2 AND ${within}`, values);
  if (!rows[0]) throw notFound('Ingestion job', jobId);
  throw new AppError('CONFLICT', `The job is already ${rows[0].status}; only pending or processing jobs can be cancelled.`);
}

/** What retrying a job submits: a payload of the records it left undone, for the job's knowledge base. */
export type RetrySubmission = { knowledgeBaseId: string; adapter: Adapter; adapterType: string; data: unknown; fileName: string | null };

/**
 * The records a finished job (completed, failed or cancelled) left undone, as a payload of its
 * adapter, cut from the payload the job keeps: those that failed and those it never processed (a
 * job that failed or was cancelled part-way has no result row for them). 404 for a job of another
 * workspace (or of a knowledge base out of reach), 409 for a job still running, one that left
 * nothing undone, or a files job (its uploaded bytes are gone).
 */
export async function failedRecords(db: Db, reach: Reach, jobId: string): Promise<RetrySubmission> {
  const { workspaceId } = reach;
  // The job is found within reach first: every later statement names a job known to be.
  const { rows } = await db.query<{ status: JobStatus; adapter_type: string; knowledge_base_id: string; file_name: string | null }>(
    `SELECT status, adapter_type, knowledge_base_id, file_name FROM ingestion_jobs
     WHERE workspace_id = $1 AND id = $2 AND ${knowledgeBaseAllowed('knowledge_base_id', 3)}`,
    [workspaceId, jobId, allowedKnowledgeBases(reach)],
  );
  const job = rows[0];
  if (!job) throw notFound('Ingestion job', jobId);
  if (job.status === 'pending' || job.status === 'processing') {
    throw new AppError('CONFLICT', `The job is still ${job.status}; its failed records can be retried once it has finished.`);
  }
  // Every ordinal of the payload without a result row, or with a failed one; record_id is null
  // for a record never processed.
  const undone = await db.query<{ ordinal: number; record_id: string | null }>(
    `SELECT o.ordinal, r.record_id
     FROM ingestion_jobs j
     CROSS JOIN generate_series(0, j.record_count - 1) AS o (ordinal)
     LEFT JOIN ingestion_job_results r ON r.job_id = j.id AND r.ordinal = o.ordinal
     WHERE j.workspace_id = $1 AND j.id = $2 AND (r.status IS NULL OR r.status = 'failed')
     ORDER BY o.ordinal`,
    [workspaceId, jobId],
  );
  if (undone.rows.length === 0) throw new AppError('CONFLICT', 'The job has no failed or unprocessed records to retry.');
  const adapter = findAdapter(job.adapter_type);
  if (!adapter?.subset) throw new AppError('CONFLICT', filesNotKeptMessage(job.adapter_type, undone.rows));
  // Read last: a payload may hold 30 MB.
  const payload = await db.query<{ payload: unknown }>('SELECT payload FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2', [workspaceId, jobId]);
  return {
    knowledgeBaseId: job.knowledge_base_id,
    adapter,
    adapterType: job.adapter_type,
    data: adapter.subset(payload.rows[0]!.payload, undone.rows.map((row) => row.ordinal)),
    fileName: job.file_name,
  };
}

/** The 409 of a files job's retry: the failed files by name (ten at most), the ones never processed by count. */
function filesNotKeptMessage(adapterType: string, undone: Array<{ record_id: string | null }>): string {
  const failed = undone.flatMap((row) => (row.record_id === null ? [] : [row.record_id]));
  const unprocessed = undone.length - failed.length;
  const named = failed.length === 0 ? [] : [`${failed.slice(0, 10).join(', ')}${failed.length > 10 ? ', …' : ''}`];
  const counted = unprocessed === 0 ? [] : [`${unprocessed} never processed`];
  return `The uploaded files of a ${adapterType} job are not kept once it ends: upload the failed ones again (${[...named, ...counted].join(', and ')}).`;
}
