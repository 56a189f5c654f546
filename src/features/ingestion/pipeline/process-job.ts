import type { Logger } from 'pino';
import type { Db, Queryable } from '../../../core/db/db.ts';
import type { EmbeddingProvider } from '../../../core/providers/embeddings/provider.ts';
import { DiskFullError } from '../../../core/db/disk-full.ts';
import { DatabaseUnavailableError } from '../../../core/db/unavailable.ts';
import { yieldEvery } from '../../../core/yield-every.ts';
import { isRecordFailure, type NormalizedRecord, type RecordFailure } from '../adapters/adapter.ts';
import type { DocumentExtractor } from '../adapters/files/extractor.ts';
import { findAdapter } from '../adapters/registry.ts';
import { chunkContent, type Chunk } from './chunking/chunk-content.ts';
import { contentHash, sha256 } from './content-hash.ts';
import { BatchSizer } from './batch-size.ts';
import { embeddingText } from './embedding-text.ts';
import { lockEmbedding } from './embedding-lock.ts';
import { LeaseLostError, UnrecoverableJobError } from '../job-errors.ts';
import { readJobFile } from '../job-files.ts';
import { firstGroup, pgliteGroupChunks } from './write-groups.ts';
import { WritesInFlight } from './writes-in-flight.ts';
import { finishedOrdinals, holdsLease, jobPayload, markExtracting, othersProcessing, saveTimings, type ClaimedJob } from '../queue.ts';

// A batch ends at whichever comes first. 256 chunks keep both embedder threads busy with full
// batches; 100 records keep a cancelled job stopping within about a second of work. Below that, a
// batch takes the records of about a second of work (see BatchSizer), starting from 10.
const BATCH_MAX_RECORDS = 100;
const BATCH_MAX_CHUNKS = 256;
const BATCH_TARGET_MS = 1000;
const BATCH_FIRST_RECORDS = 10;
// Timings are written at least once per batch, but not more often than this per job.
const TIMINGS_INTERVAL_MS = 250;
// Batch writes in flight of a job attempt on PostgreSQL while it is the only job being written:
// one writes while the next embeds, and a second uses another backend (and core): 1.3-1.4 times
// the chunks a second with one worker process. Beside another job it only competed for the cores:
// two worker processes wrote 656-764 chunks/s with it against 755-882 without (bench/README.md,
// "Two batch writes in flight"). Their transactions share no row: the keyword counters are per
// advisory-locked slot (migration 007) and per backend, and a record is in one batch at a time
// (WritesInFlight).
const WRITES_IN_FLIGHT = 2;

export type JobDeps = { db: Db; embedder: EmbeddingProvider; log: Logger; extractor: DocumentExtractor };

/** Asked before each batch is written: false once the job was cancelled, lost or the worker stops. */
export type ShouldContinue = () => Promise<boolean>;

type Indexed<T> = { ordinal: number; value: T };

type Outcome = {
  ordinal: number;
  recordId: string;
  status: 'success' | 'skipped' | 'deleted' | 'failed';
  action?: 'created' | 'updated';
  reason?: 'unchanged' | 'duplicate' | 'not_found' | 'superseded';
  entryId: string | null;
  embeddingCount: number;
  error?: string;
};

type Write = {
  ordinal: number;
  record: NormalizedRecord;
  hash: string;
  chunks: Chunk[];
  textHashes: string[];
  /**
   * Each chunk's vector, filled by the embed stage: pgvector text when the knowledge base had it,
   * else the fresh vector, which the chunk insert binds in binary (see `Queryable`).
   */
  vectors: Array<string | Float32Array>;
  embedded: number;
};

type Prepared = { outcomes: Outcome[]; deletes: Indexed<NormalizedRecord>[]; writes: Write[] };

type Timings = { parse: number; hash: number; chunk: number; embed: number; write: number };

function elapsed(start: number): number {
  return performance.now() - start;
}

/**
 * Runs one claimed job to its end (or until `shouldContinue` says stop): normalize, deduplicate
 * by content hash, chunk, embed, write. Resumable: records with a result row are skipped, and
 * a record's writes and its result row commit in one transaction (its batch's, see `write`), so
 * a crash at any point loses nothing and duplicates nothing. Every result row is fenced with the
 * lease: a worker that lost the job (cancelled, or taken over while it was frozen) writes nothing
 * more.
 */
export async function processJob(deps: JobDeps, job: ClaimedJob, shouldContinue: ShouldContinue): Promise<'done' | 'stopped'> {
  try {
    return await runBatches(deps, job, shouldContinue);
  } catch (error) {
    if (error instanceof LeaseLostError) return 'stopped';
    throw error;
  }
}

async function runBatches(deps: JobDeps, job: ClaimedJob, shouldContinue: ShouldContinue): Promise<'done' | 'stopped'> {
  const { db } = deps;
  const timings: Timings = { parse: 0, hash: 0, chunk: 0, embed: 0, write: 0 };
  const adapter = findAdapter(job.adapterType);
  if (!adapter) throw new UnrecoverableJobError(`Unknown adapter ${job.adapterType}.`);
  const knowledgeBase = await db.query<{ chunk_size: number; chunk_overlap: number }>(
    'SELECT chunk_size, chunk_overlap FROM knowledge_bases WHERE workspace_id = $1 AND id = $2',
    [job.workspaceId, job.knowledgeBaseId],
  );
  const chunking = knowledgeBase.rows[0];
  if (!chunking) throw new UnrecoverableJobError('The knowledge base was deleted.');
  const chunkOptions = { chunkSize: chunking.chunk_size, chunkOverlap: chunking.chunk_overlap };

  const done = await finishedOrdinals(db, job);
  const payload = await jobPayload(db, job);
  const normalized = adapter.normalize(payload, {
    readFile: (ordinal) => readJobFile(db, job.workspaceId, job.id, ordinal),
    isDone: (ordinal) => done.has(ordinal),
    async extract(ordinal, format, bytes) {
      if (!(await markExtracting(db, job, ordinal))) throw new LeaseLostError();
      const extracted = await deps.extractor.extract(format, bytes).catch((error: unknown) => error as Error);
      if (!(await markExtracting(db, job, null))) throw new LeaseLostError();
      if (extracted instanceof Error) throw extracted;
      return extracted;
    },
    interrupted: (ordinal) => job.interruptedOrdinals.includes(ordinal),
  });

  // Hashes written by this job so far: a duplicate inside one payload is caught even when its
  // twin is still in flight in the previous batch.
  const writtenHashes = new Map<string, string>();
  let embeddingChecked = false;
  const writes = new WritesInFlight();
  let lastSaved = 0;

  const save = async (force: boolean) => {
    if (!force && performance.now() - lastSaved < TIMINGS_INTERVAL_MS) return;
    await saveTimings(db, job, roundTimings(timings));
    lastSaved = performance.now();
  };

  const sizer = new BatchSizer(BATCH_TARGET_MS, BATCH_MAX_RECORDS, BATCH_FIRST_RECORDS);
  // A batch's time runs from the previous batch's write starting to its own: its write overlaps
  // the next batch's embedding, so that interval is what a batch costs the job.
  let batchStarted = performance.now();
  try {
    for await (const batch of batches(unfinished(normalized, done, timings), chunkOptions.chunkSize, sizer)) {
      const prepared = await prepare(deps, job, batch, writtenHashes, chunkOptions, timings);
      const started = performance.now();
      await embed(deps, job, prepared.writes);
      timings.embed += elapsed(started);
      if (!embeddingChecked && prepared.writes.some((write) => write.chunks.length > 0)) {
        await lockEmbedding(db, job, deps.embedder);
        embeddingChecked = true;
      }
      await save(false);
      if (!(await shouldContinue())) {
        await writes.settle();
        await save(true);
        return 'stopped';
      }
      const records = new Set([...prepared.writes.map((item) => item.record.id), ...prepared.deletes.map((item) => item.value.id)]);
      // PGlite has one connection: a second write would only queue behind the first. On
      // PostgreSQL a second one pays only while no other job is being written.
      const limit = db.engine === 'postgres' && !(await othersProcessing(db, job)) ? WRITES_IN_FLIGHT : 1;
      await writes.start(records, limit, () => write(db, job, prepared, timings));
      sizer.observe(batch.length, elapsed(batchStarted));
      batchStarted = performance.now();
    }
    await writes.settle();
  } finally {
    // An attempt that ends in an error leaves no write running behind it (its error is the one thrown).
    await writes.settle().catch(() => undefined);
  }
  await save(true);
  return 'done';
}

/**
 * The records a job has still to process, normalized as they are needed: a files job extracts
 * a document only when its batch is next, and the time spent (parsing, converting, extracting)
 * counts as `parse`. Converting HTML to Markdown (content-hub) takes 3-16 ms per item on this
 * thread, the one that serves HTTP: a payload of 1,000 items would hold it for seconds without a
 * yield now and then.
 */
async function* unfinished(
  normalized: Iterable<NormalizedRecord | RecordFailure> | AsyncIterable<NormalizedRecord | RecordFailure | null>,
  done: Set<number>,
  timings: Timings,
): AsyncGenerator<Indexed<NormalizedRecord | RecordFailure>> {
  const slice = yieldEvery();
  let ordinal = 0;
  let started = performance.now();
  for await (const value of normalized) {
    timings.parse += elapsed(started);
    if (value !== null && !done.has(ordinal)) yield { ordinal, value };
    ordinal += 1;
    await slice();
    started = performance.now();
  }
  timings.parse += elapsed(started);
}

function roundTimings(timings: Timings): Record<string, number> {
  return Object.fromEntries(Object.entries(timings).map(([stage, ms]) => [stage, Math.round(ms)]));
}

/** Splits records into batches bounded by record count (the sizer's, as each batch ends) and by an estimate of their chunks. */
async function* batches<T extends Indexed<NormalizedRecord | RecordFailure>>(records: AsyncIterable<T>, chunkSize: number, sizer: BatchSizer): AsyncGenerator<T[]> {
  let batch: T[] = [];
  let chunks = 0;
  for await (const record of records) {
    batch.push(record);
    chunks += isRecordFailure(record.value) ? 0 : Math.ceil(record.value.content.length / chunkSize);
    if (batch.length >= sizer.records || chunks >= BATCH_MAX_CHUNKS) {
      yield batch;
      batch = [];
      chunks = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

/** Decides each record's fate from the stored entries, and chunks those to be written. */
async function prepare(
  deps: JobDeps,
  job: ClaimedJob,
  batch: Indexed<NormalizedRecord | RecordFailure>[],
  writtenHashes: Map<string, string>,
  chunkOptions: { chunkSize: number; chunkOverlap: number },
  timings: Timings,
): Promise<Prepared> {
  const prepared: Prepared = { outcomes: [], deletes: [], writes: [] };
  let started = performance.now();
  const candidates: { ordinal: number; record: NormalizedRecord; hash: string }[] = [];
  for (const { ordinal, value } of batch) {
    if (isRecordFailure(value)) {
      prepared.outcomes.push({ ordinal, recordId: value.id, status: 'failed', entryId: null, embeddingCount: 0, error: value.error });
    } else if (value.deleted) {
      prepared.deletes.push({ ordinal, value });
    } else {
      candidates.push({ ordinal, record: value, hash: contentHash(value) });
    }
  }
  timings.hash += elapsed(started);

  const { rows: existing } = await deps.db.query<{ id: string; record_id: string; content_hash: string }>(
    `SELECT id, record_id, content_hash FROM entries
     WHERE workspace_id = $1 AND knowledge_base_id = $2 AND (record_id = ANY($3::text[]) OR content_hash = ANY($4::text[]))`,
    [job.workspaceId, job.knowledgeBaseId, candidates.map((c) => c.record.id), candidates.map((c) => c.hash)],
  );
  const byRecordId = new Map(existing.map((row) => [row.record_id, row]));
  const byHash = new Map(existing.map((row) => [row.content_hash, row]));

  started = performance.now();
  for (const { ordinal, record, hash } of candidates) {
    const current = byRecordId.get(record.id);
    const skip = (reason: Outcome['reason'], entryId: string | null, error?: string) =>
      prepared.outcomes.push({ ordinal, recordId: record.id, status: 'skipped', reason, entryId, embeddingCount: 0, ...(error ? { error } : {}) });
    if (current?.content_hash === hash) {
      skip('unchanged', current.id);
      continue;
    }
    const twin = byHash.get(hash);
    if (twin && twin.record_id !== record.id) {
      skip('duplicate', twin.id);
      continue;
    }
    const twinInJob = writtenHashes.get(hash);
    if (twinInJob !== undefined && twinInJob !== record.id) {
      skip('duplicate', null);
      continue;
    }
    writtenHashes.set(hash, record.id);
    const chunks = chunkContent(record.content, record.contentType, chunkOptions);
    if (chunks.length === 0) {
      prepared.outcomes.push({ ordinal, recordId: record.id, status: 'failed', entryId: null, embeddingCount: 0, error: 'The record has no text to index.' });
      continue;
    }
    const textHashes = chunks.map((chunk) => sha256(embeddingText(record, chunk)));
    prepared.writes.push({ ordinal, record, hash, chunks, textHashes, vectors: [], embedded: 0 });
  }
  timings.chunk += elapsed(started);
  return prepared;
}

/**
 * Fills every chunk's vector. A text whose vector the knowledge base already holds (an unchanged
 * chunk of an updated record, boilerplate shared by many records) is not embedded again.
 */
async function embed(deps: JobDeps, job: ClaimedJob, writes: Write[]): Promise<void> {
  const wanted = [...new Set(writes.flatMap((write) => write.textHashes))];
  if (wanted.length === 0) return;
  const { rows } = await deps.db.query<{ text_hash: string; vector: string }>(
    `SELECT DISTINCT ON (text_hash) text_hash, embedding::text AS vector FROM chunks
     WHERE workspace_id = $1 AND knowledge_base_id = $2 AND text_hash = ANY($3::text[])`,
    [job.workspaceId, job.knowledgeBaseId, wanted],
  );
  const known = new Map<string, string | Float32Array>(rows.map((row) => [row.text_hash, row.vector]));
  const missing = new Map<string, string>();
  for (const write of writes) {
    write.chunks.forEach((chunk, index) => {
      const hash = write.textHashes[index]!;
      if (!known.has(hash)) missing.set(hash, embeddingText(write.record, chunk));
    });
  }
  const hashes = [...missing.keys()];
  const vectors = hashes.length > 0 ? await deps.embedder.embed([...missing.values()]) : [];
  const fresh = new Set<string>();
  hashes.forEach((hash, index) => {
    known.set(hash, vectors[index]!);
    fresh.add(hash);
  });
  for (const write of writes) {
    write.vectors = write.textHashes.map((hash) => known.get(hash)!);
    write.embedded = write.textHashes.filter((hash) => fresh.delete(hash)).length;
  }
}

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
async function write(db: Db, job: ClaimedJob, prepared: Prepared, timings: Timings): Promise<void> {
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
    timings.write += elapsed(started);
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
