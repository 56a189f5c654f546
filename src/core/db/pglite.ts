import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { lockDataDir } from './data-dir-lock.ts';
import type { Db, Queryable, QueryResult } from './db.ts';

function wrap(target: PGlite | Transaction): Queryable {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query<Row>(text, values as unknown[]);
      // PGlite reports affectedRows 0 for a SELECT, where pg reports the rows returned.
      return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
    },
    async exec(text: string): Promise<void> {
      await target.exec(text);
    },
  };
}

/**
 * The embedded engine: PostgreSQL compiled to WebAssembly, in this process, stored in `dataDir`
 * (or in memory for `memory://`).
 *
 * PGlite has a single connection. Only its own `transaction()` isolates a transaction from other
 * callers (a manual BEGIN would interleave with concurrent queries), and it serializes
 * transactions, so races that exist on the server cannot show here: concurrency tests run on
 * PostgreSQL too.
 */
export async function openPglite(dataDir: string, options: { loadDataDir?: Blob } = {}): Promise<Db> {
  let unlock: () => Promise<void> = async () => undefined;
  if (!dataDir.startsWith('memory://')) {
    await mkdir(dataDir, { recursive: true });
    // Beside the directory, not in it: PGlite takes an empty directory for a new database.
    unlock = await lockDataDir(`${dataDir}.lock`, dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({ dataDir, extensions: { vector }, loadDataDir: options.loadDataDir });
  } catch (error) {
    await unlock();
    throw error;
  }
  const root = wrap(pglite);
  return {
    engine: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (work) => pglite.transaction((tx) => work(wrap(tx))),
    async close() {
      await pglite.close();
      await unlock();
    },
  };
}
