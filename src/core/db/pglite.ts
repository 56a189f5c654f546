import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { lockDataDir } from './data-dir-lock.ts';
import type { Db, Queryable, QueryOptions, QueryResult } from './db.ts';
import { checkpointWhereDue } from './embedded-checkpoint.ts';
import { PgliteThread } from './pglite-thread.ts';
import { VECTOR_SEARCH_DEFAULTS } from './vector-search-defaults.ts';

/** `asked`: told when a statement marked `question` is sent, in a transaction or not. */
function queryable(thread: PgliteThread, asked: () => void, tx?: number): Queryable {
  return {
    query: <Row>(text: string, values: readonly unknown[] = [], options?: QueryOptions) => {
      if (options?.question) asked();
      return thread.call<QueryResult<Row>>({ kind: 'query', tx, text, values, prepare: options?.prepare === true });
    },
    exec: (text: string) => thread.call<void>({ kind: 'exec', tx, text }),
  };
}

/** How often the WAL is checked for a checkpoint (embedded-checkpoint.ts): one cheap read. */
const CHECKPOINT_CHECK_MS = 30_000;

/**
 * `log` hears of each checkpoint and of a failed one; `checkpoint`, for tests, sets a shorter
 * check and a lower trigger than the server's.
 */
export type PgliteOptions = { log?: Pick<Logger, 'info' | 'warn'>; checkpoint?: { everyMs: number; limit: number } };

/**
 * The embedded engine: PostgreSQL compiled to WebAssembly, in this process but on a thread of its
 * own (pglite-thread.ts), stored in `dataDir` (or in memory for `memory://`).
 *
 * PGlite has a single connection. Only its own `transaction()` isolates a transaction from other
 * callers (a manual BEGIN would interleave with concurrent queries), and it serializes
 * transactions, so races that exist on the server cannot show here: concurrency tests run on
 * PostgreSQL too. A transaction here is opened on the thread with PGlite's `transaction()`, its
 * statements carry its id, and it ends by a commit or rollback request.
 */
export async function openPglite(dataDir: string, options: PgliteOptions = {}): Promise<Db> {
  let unlock: () => Promise<void> = async () => undefined;
  if (!dataDir.startsWith('memory://')) {
    await mkdir(dataDir, { recursive: true });
    // Beside the directory, not in it: PGlite takes an empty directory for a new database.
    unlock = await lockDataDir(`${dataDir}.lock`, dataDir);
  }
  let thread: PgliteThread | undefined;
  try {
    thread = new PgliteThread();
    await thread.call({ kind: 'open', dataDir });
  } catch (error) {
    await thread?.terminate();
    await unlock();
    throw error;
  }
  let lastQuestion = -Infinity;
  const asked = () => {
    lastQuestion = performance.now();
  };
  const root = queryable(thread, asked);
  // PGlite has no checkpointer of its own. A checkpoint holds the thread for about 160 ms (128 MB
  // of buffers after 80,000 rows), once per 539 MB of WAL: rare enough to run whether or not
  // questions come. One check runs at a time: checks that came while a long statement held the
  // thread would each read the same WAL as due and checkpoint it again (five checkpoints of the
  // same 9 MB, 120 ms each, with a check every 5 ms behind 1 MB inserts).
  let checking = false;
  const checkpoint = async () => {
    if (checking) return;
    checking = true;
    const started = performance.now();
    try {
      const walBytes = await checkpointWhereDue(root, options.checkpoint?.limit);
      if (walBytes > 0) options.log?.info({ walMb: Math.round(walBytes / 2 ** 20), ms: Math.round(performance.now() - started) }, 'embedded database checkpointed');
    } catch (error) {
      options.log?.warn({ err: error }, 'embedded database checkpoint failed');
    } finally {
      checking = false;
    }
  };
  const checkpoints = setInterval(() => void checkpoint(), options.checkpoint?.everyMs ?? CHECKPOINT_CHECK_MS);
  checkpoints.unref();
  return {
    engine: 'pglite',
    // Set for the session at open (pglite-worker.ts): the query path then runs no transaction,
    // which would wait for the ingestion's (see transaction-gate.ts).
    vectorSearchDefaults: VECTOR_SEARCH_DEFAULTS,
    query: root.query,
    exec: root.exec,
    lastQuestion: () => lastQuestion,
    searchVectors(request) {
      asked();
      return thread.call({ kind: 'vectors', search: request });
    },
    vectorGraphs: (options) => thread.call({ kind: 'vector-graphs', settled: options?.settled ?? false }),
    async transaction(work) {
      const tx = await thread.call<number>({ kind: 'begin' });
      let result;
      try {
        result = await work(queryable(thread, asked, tx));
      } catch (error) {
        // The error of the work is the one to report, even when the rollback fails too (the thread died).
        await thread.call({ kind: 'rollback', tx }).catch(() => undefined);
        throw error;
      }
      await thread.call({ kind: 'commit', tx });
      return result;
    },
    async close() {
      clearInterval(checkpoints);
      try {
        await thread.close();
      } finally {
        await unlock();
      }
    },
  };
}
