import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { lockDataDir } from './data-dir-lock.ts';
import type { Db, Queryable, QueryOptions, QueryResult } from './db.ts';
import { EMBEDDED_ROOM_BYTES, freeBytes, FullDiskWatch } from './disk-full.ts';
import { checkpointWhereDue } from './embedded-checkpoint.ts';
import { openThread, ReopeningThread, startFailure } from './pglite-open.ts';
import type { PgliteThread } from './pglite-thread.ts';
import type { PgliteRequest } from './pglite-worker.ts';
import { VECTOR_SEARCH_DEFAULTS } from './vector-search-defaults.ts';

type Send = <T>(request: PgliteRequest) => Promise<T>;

/** `asked`: told when a statement marked `question` is sent, in a transaction or not. */
function queryable(send: Send, asked: () => void, tx?: number): Queryable {
  return {
    query: <Row>(text: string, values: readonly unknown[] = [], options?: QueryOptions) => {
      if (options?.question) asked();
      return send<QueryResult<Row>>({ kind: 'query', tx, text, values, prepare: options?.prepare === true });
    },
    exec: (text: string) => send<void>({ kind: 'exec', tx, text }),
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
  const onDisk = !dataDir.startsWith('memory://');
  let unlock: () => Promise<void> = async () => undefined;
  let first: PgliteThread;
  try {
    if (onDisk) {
      await mkdir(dataDir, { recursive: true });
      // Beside the directory, not in it: PGlite takes an empty directory for a new database.
      unlock = await lockDataDir(`${dataDir}.lock`, dataDir);
    }
    first = await openThread(dataDir);
  } catch (error) {
    await unlock();
    throw onDisk ? await startFailure(error, dataDir) : error;
  }
  const free = onDisk ? await freeBytes(dataDir).catch(() => Infinity) : Infinity;
  if (free < EMBEDDED_ROOM_BYTES) options.log?.warn({ dataDir, freeBytes: free }, 'the disk holding DATA_DIR is nearly full: writes may soon answer 507');
  const disk = new FullDiskWatch(dataDir);
  const threads = new ReopeningThread(first, dataDir, disk, options.log);
  const translate = (error: unknown) => {
    throw disk.translate(error);
  };
  /** Sends to `thread` (a transaction's), or to the current thread; errors of a full disk become DiskFullError. */
  const sender =
    (thread?: PgliteThread): Send =>
    <T>(request: PgliteRequest) =>
      (thread ? thread.call<T>(request) : threads.current().then((current) => current.call<T>(request))).catch(translate);
  const send = sender();
  let lastQuestion = -Infinity;
  const asked = () => {
    lastQuestion = performance.now();
  };
  const root = queryable(send, asked);
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
      return send({ kind: 'vectors', search: request });
    },
    vectorGraphs: (options) => send({ kind: 'vector-graphs', settled: options?.settled ?? false }),
    async diskFull() {
      const free = await disk.stillFull();
      return free === undefined ? undefined : `The disk holding DATA_DIR is full: ${free} bytes free.`;
    },
    async transaction(work) {
      // A transaction stays on the thread it began on: should that one be lost, its statements fail.
      const inTransaction = sender(await threads.current().catch(translate));
      const tx = await inTransaction<number>({ kind: 'begin' });
      let result;
      try {
        result = await work(queryable(inTransaction, asked, tx));
      } catch (error) {
        // The error of the work is the one to report, even when the rollback fails too (the thread died).
        await inTransaction({ kind: 'rollback', tx }).catch(() => undefined);
        throw error;
      }
      await inTransaction({ kind: 'commit', tx });
      return result;
    },
    async close() {
      clearInterval(checkpoints);
      try {
        await threads.close();
      } finally {
        await unlock();
      }
    },
  };
}
