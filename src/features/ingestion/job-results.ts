import type { Queryable } from '../../core/db/db.ts';
import type { RecordResult } from './jobs.schemas.ts';

/**
 * A job's per-record results are nearly all of its body (670 KB for 5,000 records), and building
 * them was nearly all of a GET's cost: 12.7 ms of API CPU and 3.1 ms of database CPU per GET on
 * PostgreSQL, spent parsing rows, mapping them, in fast-json-stringify (whose anyOf branches run
 * ajv per record), and flattening the string into the socket (bench/job-get.ts). So each API
 * process serializes a job's results once per version and keeps the JSON text, and every GET
 * reads the version from the database first (`resultsVersionSql`): the cache never answers for
 * results that changed, whichever process or worker changed them.
 */

/** A job's counters, from its result rows. */
export type Counts = {
  processed: number;
  successful: number;
  failed: number;
  skipped: number;
  created: number;
  updated: number;
  deleted: number;
  embeddings: number;
};

/** A job's results as served: their JSON array text, their counters, and the version they are of. */
export type JobResults = { version: string; counts: Counts; json: Buffer };

/**
 * The version of job `j`'s results, a column of a statement reading `ingestion_jobs j` (whose
 * own workspace filter isolates them: a job's result rows are its workspace's): their
 * number and the sum of their rows' xmin (the transaction that wrote each row version). Lore only
 * ever inserts result rows, which changes the number; an update (replacing a row's xmin with a
 * later transaction's) or a delete would change one of them too. Costs 0.6 ms for 5,000 rows on
 * PostgreSQL (0.3 ms for the number alone). `jobResults` sums the rows it reads in a double,
 * exact up to 2^53 (two million rows of 32-bit transaction ids); past that the two sums would
 * differ and the results would be read again each time, never served stale.
 */
export const resultsVersionSql = `(SELECT count(*) || ':' || coalesce(sum(r.xmin::text::int8), 0)
  FROM ingestion_job_results r WHERE r.job_id = j.id) AS results_version`;

type ResultRow = {
  job_id: string;
  xmin: number | bigint;
  record_id: string;
  status: RecordResult['status'];
  action: 'created' | 'updated' | null;
  reason: string | null;
  entry_id: string | null;
  embedding_count: number;
  error: string | null;
};

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

/**
 * Serialized results of the jobs this process read lately, least recently used first out, at
 * most `maxBytes` of JSON text in all. An entry answers only for its workspace and its version.
 */
export class JobResultsCache {
  private readonly entries = new Map<string, JobResults & { workspaceId: string }>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(workspaceId: string, jobId: string, version: string): JobResults | undefined {
    const entry = this.entries.get(jobId);
    if (!entry || entry.workspaceId !== workspaceId || entry.version !== version) return undefined;
    this.entries.delete(jobId);
    this.entries.set(jobId, entry);
    return entry;
  }

  set(workspaceId: string, jobId: string, results: JobResults): void {
    this.delete(jobId);
    if (results.json.length > this.maxBytes) return;
    for (const [oldest] of this.entries) {
      if (this.bytes + results.json.length <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.entries.set(jobId, { ...results, workspaceId });
    this.bytes += results.json.length;
  }

  /** Bytes of JSON text held. */
  get size(): number {
    return this.bytes;
  }

  private delete(jobId: string): void {
    const entry = this.entries.get(jobId);
    if (!entry) return;
    this.bytes -= entry.json.length;
    this.entries.delete(jobId);
  }
}

/**
 * The results of `jobs` (each with the version its statement read), from the cache, or read in
 * one statement and cached. The version stored is that of the rows read, which may be newer
 * than the one asked for when a worker committed in between; the next GET then reads it again.
 */
export async function jobResults(
  db: Queryable,
  cache: JobResultsCache,
  workspaceId: string,
  jobs: { id: string; results_version: string }[],
): Promise<Map<string, JobResults>> {
  const found = new Map<string, JobResults>();
  const stale: string[] = [];
  for (const job of jobs) {
    const cached = cache.get(workspaceId, job.id, job.results_version);
    if (cached) found.set(job.id, cached);
    else stale.push(job.id);
  }
  if (stale.length === 0) return found;
  const { rows } = await db.query<ResultRow>(
    `SELECT job_id, xmin::text::int8 AS xmin, record_id, status, action, reason, entry_id, embedding_count, error
     FROM ingestion_job_results WHERE workspace_id = $1 AND job_id = ANY($2::uuid[])
     ORDER BY job_id, ordinal`,
    [workspaceId, stale],
  );
  const byJob = new Map<string, ResultRow[]>(stale.map((id) => [id, []]));
  for (const row of rows) byJob.get(row.job_id)!.push(row);
  for (const [jobId, jobRows] of byJob) {
    const results = jobRows.map(toResult);
    const transactions = jobRows.reduce((sum, row) => sum + Number(row.xmin), 0);
    const serialized = { version: `${jobRows.length}:${transactions}`, counts: countResults(results), json: Buffer.from(JSON.stringify(results)) };
    cache.set(workspaceId, jobId, serialized);
    found.set(jobId, serialized);
  }
  return found;
}
