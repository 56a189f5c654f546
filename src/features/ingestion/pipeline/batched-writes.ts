/**
 * The write half of the pipeline: the SQL that stores a prepared batch (entries, chunks with their
 * keyword postings through the chunks' trigger, result rows), fenced with the job's lease.
 * process-job.ts decides what to write; this module only writes it.
 */
import type { Db, Queryable } from '../../../core/db/db.ts';
import { DiskFullError } from '../../../core/db/disk-full.ts';
import { DatabaseUnavailableError } from '../../../core/db/unavailable.ts';
import type { NormalizedRecord } from '../adapters/adapter.ts';
import { LeaseLostError } from '../job-errors.ts';
import { holdsLease, type ClaimedJob } from '../queue.ts';
import type { Chunk } from './chunking/types.ts';
import type { Indexed, Outcome, Prepared, Timings, Write } from './types.ts';
import { firstGroup, pgliteGroupChunks } from './write-groups.ts';

class AlreadyRecorded extends Error {}

/**
 * A failure no rewrite of the records can get past: the job is no longer this worker's, the
 * database is gone, or its disk is full (writing each record alone would only meet it again).
 */
const endsAttempt = (error: unknown) => error instanceof LeaseLostError || error instanceof DatabaseUnavailableError || error instanceof DiskFullError;

/**
 * Inserts a record's result row, fenced with the lease. No row means either that another worker
 * recorded this record first (it took the job over while this one stalled: roll this copy back,
 * so that nothing is written twice) or that the job is no longer this worker's (stop).
 */
async function insertResult(tx: Queryable, job: ClaimedJob, outcome: Outcome): Promise<void> {
  if ((await insertResults(tx, job, [outcome])) > 0) return;
  if (await holdsLease(tx, job)) throw new AlreadyRecorded();
  throw new LeaseLostError();
}

/**
 * Inserts result rows in one statement, fenced with the lease: none goes in unless this worker
 * still holds the job. A row already recorded (by a worker that took the job over) is left alone.
 * Returns how many went in.
 */
async function insertResults(tx: Queryable, job: ClaimedJob, outcomes: Outcome[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  const { rowCount } = await tx.query(
    `INSERT INTO ingestion_job_results
       (job_id, workspace_id, ordinal, record_id, status, action, reason, entry_id, embedding_count, error)
     SELECT $1, $2, o.ordinal, o.record_id, o.status, o.action, o.reason, o.entry_id, o.embedding_count, o.error
     FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::int[], $10::text[])
       AS o(ordinal, record_id, status, action, reason, entry_id, embedding_count, error)
     WHERE EXISTS (SELECT 1 FROM ingestion_jobs WHERE workspace_id = $2 AND id = $1 AND lease_owner = $11 AND status = 'processing')
     ON CONFLICT (job_id, ordinal) DO NOTHING`,
    [
      job.id,
      job.workspaceId,
      outcomes.map((o) => o.ordinal),
      outcomes.map((o) => o.recordId),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.action ?? null),
      outcomes.map((o) => o.reason ?? null),
      outcomes.map((o) => o.entryId),
      outcomes.map((o) => o.embeddingCount),
      outcomes.map((o) => o.error ?? null),
      job.workerId,
    ],
  );
  return rowCount;
}

/** The page (from 1) that the text at `offset` is on, or null for content without pages. */
export function pageOf(pageStarts: readonly number[] | undefined, offset: number): number | null {
  if (!pageStarts || pageStarts.length === 0) return null;
  let page = 1;
  // The last page starting at or before the offset: empty pages start where the next one does.
  for (let index = 1; index < pageStarts.length && pageStarts[index]! <= offset; index += 1) page = index + 1;
  return page;
}

/**
 * Writes a prepared batch: on PostgreSQL the whole batch in one transaction of a few multi-row
 * statements (the chunks' keyword trigger, a statement trigger, then runs once per batch instead
 * of once per record), on PGlite group by group the same way (write-groups.ts). Should
 * any statement fail, or a result row turn out to be recorded already, that transaction rolls
 * back as a whole and its records are written again one by one, each with its result row in a
 * transaction of its own: a record stays atomic, and one record that cannot be written never
 * takes the others down with it.
 */
export async function writePrepared(db: Db, job: ClaimedJob, prepared: Prepared, timings: Timings): Promise<void> {
  const started = performance.now();
  try {
    if (repeatsRecord(prepared)) {
      await writeRecordByRecord(db, job, prepared);
      return;
    }
    // A record that cannot be written is thrown once the other groups of its batch are written.
    let failure: unknown;
    for (let rest: Prepared | undefined = prepared; rest; ) {
      const [group, next]: [Prepared, Prepared | undefined] = db.engine === 'pglite' ? firstGroup(rest, pgliteGroupChunks(db)) : [rest, undefined];
      try {
        await db.transaction((tx) => writeBatch(tx, db.engine, job, group));
      } catch (error) {
        if (endsAttempt(error)) throw error;
        await writeRecordByRecord(db, job, group).catch((error: unknown) => {
          if (endsAttempt(error)) throw error;
          failure ??= error;
        });
      }
      rest = next;
    }
    if (failure !== undefined) throw failure;
  } finally {
    timings.write += performance.now() - started;
  }
}

/**
 * A vector's dimension, counted here rather than by `vector_dims()` in SQL, which would parse the
 * vector's text a second time: 1-2 ms per 384-dimension vector in PGlite (measured on 355 vectors).
 */
function dimensionOf(vector: string | Float32Array): number {
  if (typeof vector !== 'string') return vector.length;
  let commas = 0;
  for (let index = vector.indexOf(','); index !== -1; index = vector.indexOf(',', index + 1)) commas += 1;
  return commas + 1;
}

/**
 * True when a record id comes twice among a batch's writes or twice among its deletes: one
 * multi-row upsert cannot touch a row twice, and record by record the later one wins, as it must.
 */
function repeatsRecord(prepared: Prepared): boolean {
  const written = prepared.writes.map((item) => item.record.id);
  const deleted = prepared.deletes.map((item) => item.value.id);
  return new Set(written).size < written.length || new Set(deleted).size < deleted.length;
}

/** The batch's statements, in the order writing it record by record would run them. */
async function writeBatch(tx: Queryable, engine: Db['engine'], job: ClaimedJob, prepared: Prepared): Promise<void> {
  // The batch need not wait for its WAL flush: should the server crash first, its records and
  // their result rows are lost together, and the resumed job writes them again.
  if (engine === 'postgres') await tx.query('SET LOCAL synchronous_commit = off');
  const outcomes = [...prepared.outcomes, ...(await deleteRecords(tx, job, prepared.deletes))];
  outcomes.push(...(await writeRecords(tx, job, prepared.writes)));
  const recorded = await insertResults(tx, job, outcomes);
  if (recorded < outcomes.length) {
    if (!(await holdsLease(tx, job))) throw new LeaseLostError();
    throw new AlreadyRecorded();
  }
}

/** The batch's deletions as one statement; a record id not stored (or stored by a later job) is not found. */
async function deleteRecords(tx: Queryable, job: ClaimedJob, deletes: Indexed<NormalizedRecord>[]): Promise<Outcome[]> {
  if (deletes.length === 0) return [];
  const { rows } = await tx.query<{ id: string; record_id: string }>(
    `DELETE FROM entries WHERE workspace_id = $1 AND knowledge_base_id = $2 AND record_id = ANY($3::text[]) AND job_created_at <= $4
     RETURNING id, record_id`,
    [job.workspaceId, job.knowledgeBaseId, deletes.map((item) => item.value.id), job.createdAt],
  );
  const deleted = new Map(rows.map((row) => [row.record_id, row.id]));
  return deletes.map((item) => {
    const base = { ordinal: item.ordinal, recordId: item.value.id, embeddingCount: 0 };
    const entryId = deleted.get(item.value.id);
    return entryId ? { ...base, status: 'deleted', entryId } : { ...base, status: 'skipped', reason: 'not_found', entryId: null };
  });
}

/**
 * The batch's entries as one upsert, the chunks of the updated ones deleted in one statement, and
 * every chunk of the batch inserted in one more. An entry stored by a job submitted later is left
 * as it is: that record is superseded.
 */
async function writeRecords(tx: Queryable, job: ClaimedJob, writes: Write[]): Promise<Outcome[]> {
  if (writes.length === 0) return [];
  const records = writes.map((item) => item.record);
  const { rows } = await tx.query<{ id: string; record_id: string; created: boolean }>(
    `INSERT INTO entries (workspace_id, knowledge_base_id, source_id, record_id, title, content, content_type, url,
       tags, metadata, content_hash, chunk_count, job_id, job_created_at)
     SELECT $1, $2, $3, r.record_id, r.title, r.content, r.content_type, r.url,
       ARRAY(SELECT jsonb_array_elements_text(r.tags::jsonb)), r.metadata::jsonb, r.content_hash, r.chunk_count, $4, $5
     FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[])
       AS r(record_id, title, content, content_type, url, tags, metadata, content_hash, chunk_count)
     ON CONFLICT (knowledge_base_id, record_id) DO UPDATE SET
       source_id = EXCLUDED.source_id, title = EXCLUDED.title, content = EXCLUDED.content,
       content_type = EXCLUDED.content_type, url = EXCLUDED.url, tags = EXCLUDED.tags, metadata = EXCLUDED.metadata,
       content_hash = EXCLUDED.content_hash, chunk_count = EXCLUDED.chunk_count, job_id = EXCLUDED.job_id,
       job_created_at = EXCLUDED.job_created_at, updated_at = now()
     WHERE entries.workspace_id = EXCLUDED.workspace_id AND entries.job_created_at <= EXCLUDED.job_created_at
     RETURNING id, record_id, (xmax = 0) AS created`,
    [
      job.workspaceId,
      job.knowledgeBaseId,
      job.sourceId,
      job.id,
      job.createdAt,
      records.map((record) => record.id),
      records.map((record) => record.title),
      records.map((record) => record.content),
      records.map((record) => record.contentType),
      records.map((record) => record.url ?? null),
      records.map((record) => JSON.stringify(record.tags)),
      records.map((record) => JSON.stringify(record.metadata)),
      writes.map((item) => item.hash),
      writes.map((item) => item.chunks.length),
    ],
  );
  const entries = new Map(rows.map((row) => [row.record_id, row]));
  const updated = rows.filter((row) => !row.created).map((row) => row.id);
  if (updated.length > 0) await tx.query('DELETE FROM chunks WHERE workspace_id = $1 AND entry_id = ANY($2::uuid[])', [job.workspaceId, updated]);

  const chunks: ChunkRow[] = [];
  writes.forEach((item) => {
    const entry = entries.get(item.record.id);
    if (!entry) return;
    item.chunks.forEach((chunk, position) => {
      chunks.push({
        entryId: entry.id,
        title: item.record.title,
        chunk,
        textHash: item.textHashes[position]!,
        vector: item.vectors[position]!,
        dimension: dimensionOf(item.vectors[position]!),
        page: pageOf(item.record.pageStarts, chunk.start),
      });
    });
  });
  for (let first = 0; first < chunks.length; first += CHUNKS_PER_INSERT) await insertChunks(tx, job, chunks.slice(first, first + CHUNKS_PER_INSERT));
  return writes.map((item): Outcome => {
    const entry = entries.get(item.record.id);
    const base = { ordinal: item.ordinal, recordId: item.record.id };
    if (!entry) return { ...base, status: 'skipped', reason: 'superseded', entryId: null, embeddingCount: 0 };
    return { ...base, status: 'success', action: entry.created ? 'created' : 'updated', entryId: entry.id, embeddingCount: item.embedded };
  });
}

type ChunkRow = { entryId: string; title: string; chunk: Chunk; textHash: string; vector: string | Float32Array; dimension: number; page: number | null };

// Chunks per INSERT: it binds a parameter per vector, and a statement takes at most 65,535.
const CHUNKS_PER_INSERT = 1000;

/** Inserts chunks of the job's knowledge base in one statement (its keyword trigger runs once). */
async function insertChunks(tx: Queryable, job: ClaimedJob, chunks: ChunkRow[]): Promise<void> {
  const columns = [
    job.workspaceId,
    job.knowledgeBaseId,
    chunks.map((row) => row.entryId),
    chunks.map((row) => row.title),
    chunks.map((row) => row.chunk.ordinal),
    chunks.map((row) => row.chunk.text),
    chunks.map((row) => row.chunk.headingPath.join('\u001f')),
    chunks.map((row) => row.chunk.start),
    chunks.map((row) => row.chunk.end),
    chunks.map((row) => row.textHash),
    chunks.map((row) => row.dimension),
    chunks.map((row) => row.page),
  ];
  // A parameter per vector after the columns', so that each is bound in binary (an array parameter is text).
  const vectorParameters = chunks.map((_, index) => `$${columns.length + 1 + index}::vector`).join(', ');
  await tx.query(
    `INSERT INTO chunks (workspace_id, knowledge_base_id, entry_id, ordinal, text, heading_path, start_offset, end_offset,
       text_hash, embedding, embedding_dimension, search_vector, page)
     SELECT $1, $2, c.entry_id, c.ordinal, c.text, string_to_array(c.headings, chr(31)), c.start_offset, c.end_offset,
       c.text_hash, c.vector, c.dimension,
       setweight(keyword_document(c.title || ' ' || replace(c.headings, chr(31), ' ')), 'A') || keyword_document(c.text), c.page
     FROM unnest($3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::int[], $10::text[], ARRAY[${vectorParameters}], $11::int[], $12::int[])
       AS c(entry_id, title, ordinal, text, headings, start_offset, end_offset, text_hash, vector, dimension, page)`,
    [...columns, ...chunks.map((row) => row.vector)],
  );
}

/**
 * The way back when the batch's transaction failed: each record with its result row in a
 * transaction of its own. A record that still fails is left without a result row (the job's next
 * attempt tries it again) while the others are written; its error is thrown at the end.
 */
async function writeRecordByRecord(db: Db, job: ClaimedJob, prepared: Prepared): Promise<void> {
  let failure: unknown;
  const commit = async (work: (tx: Queryable) => Promise<Outcome>) => {
    try {
      await db.transaction(async (tx) => {
        if (db.engine === 'postgres') await tx.query('SET LOCAL synchronous_commit = off');
        await insertResult(tx, job, await work(tx));
      });
    } catch (error) {
      if (endsAttempt(error)) throw error;
      if (!(error instanceof AlreadyRecorded)) failure ??= error;
    }
  };
  if (prepared.outcomes.length > 0) await commitOutcomes(db, job, prepared.outcomes);
  for (const item of prepared.deletes) await commit(async (tx) => (await deleteRecords(tx, job, [item]))[0]!);
  for (const item of prepared.writes) await commit(async (tx) => (await writeRecords(tx, job, [item]))[0]!);
  if (failure !== undefined) throw failure;
}

/** Skipped and failed records touch no entry: their result rows go in as one statement, fenced too. */
async function commitOutcomes(db: Db, job: ClaimedJob, outcomes: Outcome[]): Promise<void> {
  const recorded = await insertResults(db, job, outcomes);
  if (recorded < outcomes.length && !(await holdsLease(db, job))) throw new LeaseLostError();
}
