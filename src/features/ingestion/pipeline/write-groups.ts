/**
 * How a job writes a batch on PGlite: in groups of whole records, each a transaction of its own.
 *
 * PGlite is one connection: a question waits for the write transaction in progress. A whole batch
 * in one transaction (1.5-3.5 s) made question p99 during an ingestion 29 times idle. A
 * transaction per record kept it at 1.5 times (bench/healthz-during-ingest.ts) but paid a
 * statement's fixed costs per record: 1,500 records (6,572 chunks, builtin-fast) ingested at
 * 103-118 chunks/s that way, and at 136-157 in groups of about 24 chunks (48 and 96 gave 134-135:
 * the HNSW insert, 3-6 ms a chunk, is most of what is left). Beside questions, groups of 24 made
 * their p99 4.2 times idle (a question waits for a whole group), so while questions come (one in
 * the last QUESTION_HOLD_MS) a transaction holds one record. The job's own statements and its
 * client's polls do not count: a rule that counted every statement that waited for a transaction
 * left the ingestion alone at 98-125 chunks/s (bench/history.md, "PGlite's writes").
 */
import type { Db } from '../../../core/db/db.ts';
import { QUESTION_HOLD_MS } from '../../../core/question-hold.ts';

const PGLITE_GROUP_CHUNKS = 24;

/** What a group is cut from: result rows that touch no entry, deletions, then writes of chunks. */
type Batch = { outcomes: readonly unknown[]; deletes: unknown[]; writes: { chunks: readonly unknown[] }[] };

/** The chunks of PGlite's next write transaction: a group's, or 0 (one record) while questions come. */
export function pgliteGroupChunks(db: Pick<Db, 'lastQuestion'>, now = performance.now()): number {
  return now - (db.lastQuestion?.() ?? -Infinity) < QUESTION_HOLD_MS ? 0 : PGLITE_GROUP_CHUNKS;
}

/**
 * The first group of a batch, and the rest: the result rows, then deletions and writes in the
 * order writing the batch at once runs them, for as long as their chunks stay within `chunks` (a
 * deletion counts one). A group holds one deletion or write at least.
 */
export function firstGroup<B extends Batch>(batch: B, chunks: number): [B, B | undefined] {
  const group: B = { ...batch, deletes: [], writes: [] };
  let held = 0;
  const fits = (cost: number) => group.deletes.length + group.writes.length === 0 || held + cost <= chunks;
  while (group.deletes.length < batch.deletes.length && fits(1)) {
    group.deletes.push(batch.deletes[group.deletes.length]!);
    held += 1;
  }
  while (group.deletes.length === batch.deletes.length && group.writes.length < batch.writes.length) {
    const item = batch.writes[group.writes.length]!;
    if (!fits(item.chunks.length)) break;
    group.writes.push(item);
    held += item.chunks.length;
  }
  const rest: B = { ...batch, outcomes: [], deletes: batch.deletes.slice(group.deletes.length), writes: batch.writes.slice(group.writes.length) };
  return [group, rest.deletes.length + rest.writes.length > 0 ? rest : undefined];
}
