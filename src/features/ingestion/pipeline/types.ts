/**
 * The shapes a batch takes on its way through the pipeline: process-job.ts prepares and embeds
 * it, batched-writes.ts writes it. They live here, below both, so that neither imports the other's
 * types (one import circle less, issue 36).
 */
import type { NormalizedRecord } from '../adapters/adapter.ts';
import type { Chunk } from './chunking/types.ts';

/** A record (or its failure) with its place in the job's payload. */
export type Indexed<T> = { ordinal: number; value: T };

/** A record's result row, as `ingestion_job_results` stores it. */
export type Outcome = {
  ordinal: number;
  recordId: string;
  status: 'success' | 'skipped' | 'deleted' | 'failed';
  action?: 'created' | 'updated';
  reason?: 'unchanged' | 'duplicate' | 'not_found' | 'superseded';
  entryId: string | null;
  embeddingCount: number;
  error?: string;
};

/** A record to be written: its entry, its chunks and their vectors. */
export type Write = {
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

/** A batch ready to write: result rows that touch no entry, deletions, then writes. */
export type Prepared = { outcomes: Outcome[]; deletes: Indexed<NormalizedRecord>[]; writes: Write[] };

/** Milliseconds a job attempt spent in each stage, saved as the job's timings. */
export type Timings = { parse: number; hash: number; chunk: number; embed: number; write: number };
