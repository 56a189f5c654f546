/**
 * PGlite runs PostgreSQL as a single-user backend, without the checkpointer: nothing checkpoints
 * while the process runs, so its write-ahead log grows without bound and a crash replays all of
 * it at the next start. Measured: an ingestion writes about 27 KB of WAL a chunk (1,500 records,
 * 6,572 chunks, builtin-fast: 177 MB of `pg_wal` beside a 140 MB database), none of it recycled
 * until a clean close; a store of 100,000 chunks would leave 2.7 GB. This applies the server's
 * own trigger, a checkpoint once the WAL since the last one reaches max_wal_size / (1 +
 * checkpoint_completion_target) (539 MB with the defaults), after which PostgreSQL recycles the
 * old segments itself.
 */
import type { Queryable } from './db.ts';

/** Bytes of WAL written since the last checkpoint's redo point, and the server's trigger. */
export type WalState = { sinceCheckpoint: number; limit: number };

export async function walState(db: Queryable): Promise<WalState> {
  const { rows } = await db.query<WalState>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::float8 AS "sinceCheckpoint",
       pg_size_bytes(current_setting('max_wal_size'))::float8
         / (1 + current_setting('checkpoint_completion_target')::float8) AS "limit"
     FROM pg_control_checkpoint()`,
  );
  return rows[0]!;
}

/**
 * Checkpoints when the WAL since the last checkpoint has reached `limit` (the server's trigger by
 * default). Returns the bytes of WAL the checkpoint lets go, or 0 when none was due.
 */
export async function checkpointWhereDue(db: Queryable, limit?: number): Promise<number> {
  const state = await walState(db);
  if (state.sinceCheckpoint < (limit ?? state.limit)) return 0;
  await db.exec('CHECKPOINT');
  return state.sinceCheckpoint;
}
