import type { Logger } from 'pino';
import type { Db } from '../../../core/db/db.ts';
import type { EmbeddingProvider } from '../../../core/providers/embeddings/provider.ts';
import { yieldEvery } from '../../../core/yield-every.ts';
import { isRecordFailure, type NormalizedRecord, type RecordFailure } from '../adapters/adapter.ts';
import type { DocumentExtractor } from '../adapters/files/extractor.ts';
import { findAdapter } from '../adapters/registry.ts';
import { writePrepared } from './batched-writes.ts';
import { chunkContent } from './chunking/chunk-content.ts';
import { contentHash, sha256 } from './content-hash.ts';
import { BatchSizer } from './batch-size.ts';
import { embeddingText } from './embedding-text.ts';
import { lockEmbedding } from './embedding-lock.ts';
import { LeaseLostError, UnrecoverableJobError } from '../job-errors.ts';
import { readJobFile } from '../job-files.ts';
import { WritesInFlight } from './writes-in-flight.ts';
import { finishedOrdinals, jobPayload, markExtracting, othersProcessing, saveTimings, type ClaimedJob } from '../queue.ts';
import type { Indexed, Outcome, Prepared, Timings, Write } from './types.ts';

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
// two worker processes wrote 656-764 chunks/s with it against 755-882 without (bench/history.md,
// "Two batch writes in flight"). Their transactions share no row: the keyword counters are per
// advisory-locked slot (migration 007) and per backend, and a record is in one batch at a time
// (WritesInFlight).
const WRITES_IN_FLIGHT = 2;

export type JobDeps = { db: Db; embedder: EmbeddingProvider; log: Logger; extractor: DocumentExtractor };

/** Asked before each batch is written: false once the job was cancelled, lost or the worker stops. */
export type ShouldContinue = () => Promise<boolean>;

function elapsed(start: number): number {
  return performance.now() - start;
}

/**
 * Runs one claimed job to its end (or until `shouldContinue` says stop): normalize, deduplicate
 * by content hash, chunk, embed, then hand each batch to `writePrepared` (batched-writes.ts).
 * Resumable: records with a result row are skipped, and a record's writes and its result row
 * commit in one transaction (its batch's), so a crash at any point loses nothing and duplicates
 * nothing. Every result row is fenced with the lease: a worker that lost the job (cancelled, or
 * taken over while it was frozen) writes nothing more.
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
      await writes.start(records, limit, () => writePrepared(db, job, prepared, timings));
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
