import type { Counts, JobResults } from './job-results.ts';
import type { Job, JobStatus } from './jobs.schemas.ts';

/** A row of `ingestion_jobs` as the job routes read it. */
export type JobRow = {
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  source_id: string;
  adapter_type: string;
  adapter_id: string;
  status: JobStatus;
  record_count: number;
  /** See migration 010. */
  file_name: string | null;
  retry_of: string | null;
  timings: Record<string, number>;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  /** The submitted payload's JSON text, with includePayload. */
  payload?: string;
  /** See `resultsVersionSql`. */
  results_version: string;
};

/**
 * JSON text in pieces, joined once into the response: the results as cached, the rest serialized
 * per request (a few hundred bytes; the eta moves with the clock).
 */
export type JsonPieces = (string | Buffer)[];

type Member = [name: string, json: string | Buffer | JsonPieces];

function object(members: Member[]): JsonPieces {
  const pieces: JsonPieces = ['{'];
  members.forEach(([name, json], index) => {
    pieces.push(`${index > 0 ? ',' : ''}${JSON.stringify(name)}:`);
    if (Array.isArray(json)) pieces.push(...json);
    else pieces.push(json);
  });
  pieces.push('}');
  return pieces;
}

/** The members of `value`, serialized, in its own order. */
function members(value: object): Member[] {
  return Object.entries(value).map(([name, member]) => [name, JSON.stringify(member)]);
}

/** The fields of a job row that its body shows besides the results. */
export type JobFields = Omit<JobRow, 'workspace_id' | 'payload' | 'results_version'>;

/** Throughput so far (at `now`) and the time left at that rate; null unless the job is processing. */
function eta(row: JobFields, processed: number, now: number): Job['data']['eta'] {
  if (row.status !== 'processing' || !row.started_at || processed === 0) return null;
  const seconds = Math.max((now - row.started_at.getTime()) / 1000, 0.001);
  const recordsPerSecond = processed / seconds;
  return {
    recordsPerSecond: Math.round(recordsPerSecond * 10) / 10,
    secondsRemaining: Math.round(((row.record_count - processed) / recordsPerSecond) * 10) / 10,
  };
}

/** A job but its results and payload, in JobSchema's order, as it stood at `now` (webhook payloads show a past moment). */
export function jobWithoutResults(row: JobFields, counts: Counts, now = Date.now()): Omit<Job, 'data' | 'payload'> & { data: Omit<Job['data'], 'results'> } {
  return {
    id: row.id,
    status: row.status,
    data: {
      adapterId: row.adapter_id,
      adapterType: row.adapter_type,
      knowledgeBaseId: row.knowledge_base_id,
      recordCount: row.record_count,
      fileName: row.file_name,
      retryOf: row.retry_of,
      progress: {
        processed: counts.processed,
        total: row.record_count,
        successful: counts.successful,
        failed: counts.failed,
        skipped: counts.skipped,
      },
      eta: eta(row, counts.processed, now),
      timings: row.timings,
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
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

/** One job's JSON (JobSchema), its results spliced in as serialized, its payload as stored. */
export function jobJson(row: JobRow, results: JobResults): JsonPieces {
  const { id, status, data, result, ...times } = jobWithoutResults(row, results.counts);
  return object([
    ...members({ id, status }),
    ['data', object([...members(data), ['results', results.json]])],
    ...members({ result }),
    ...(row.payload === undefined ? [] : [['payload', row.payload] as Member]),
    ...members(times),
  ]);
}

/** A page of jobs' JSON: `{total, jobs}`. */
export function jobsPageJson(total: number, jobs: JsonPieces[]): JsonPieces {
  return object([
    ['total', String(total)],
    ['jobs', ['[', ...jobs.flatMap((job, index) => (index > 0 ? [',', ...job] : job)), ']']],
  ]);
}

/** The response body. */
export function joined(pieces: JsonPieces): Buffer {
  return Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
}
