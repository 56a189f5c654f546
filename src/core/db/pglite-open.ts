/**
 * Opening the embedded database on a thread of its own (pglite-thread.ts): at start, where a full
 * disk is said in those words, and again after the thread was lost.
 */
import type { Logger } from 'pino';
import { DiskFullError, EMBEDDED_ROOM_BYTES, freeBytes, isDiskFull, type FullDiskWatch } from './disk-full.ts';
import { PgliteThread } from './pglite-thread.ts';

// A thread lost for another reason than the disk (it died) is opened again at most this often,
// so that a database that cannot start does not cost a start at every request: opening a migrated
// database took 1.4-2.5 s (1.3-1.4 s of CPU) here.
const REOPEN_INTERVAL_MS = 5_000;

/** A new thread with the database in `dataDir` open on it; the thread is ended when it cannot open. */
export async function openThread(dataDir: string): Promise<PgliteThread> {
  const thread = new PgliteThread();
  try {
    await thread.call({ kind: 'open', dataDir });
    return thread;
  } catch (error) {
    await thread.terminate();
    throw error;
  }
}

// PGlite's own words for a start that failed: PostgreSQL's reasons follow them when it printed any.
const OPAQUE_START_FAILURE = /^(PGlite failed to initialize|Aborted\()/;

/**
 * A start that a full disk stopped, said in those words with the free bytes, instead of PGlite's
 * "failed to initialize properly" or a bare ENOSPC. Below EMBEDDED_ROOM_BYTES free, a start that
 * failed without saying why is put down to the disk too. Any other error is returned as it is.
 */
export async function startFailure(error: unknown, dataDir: string): Promise<unknown> {
  const free = await freeBytes(dataDir).catch(() => undefined);
  const opaque = error instanceof Error && OPAQUE_START_FAILURE.test(error.message);
  if (free === undefined || !(isDiskFull(error) || (opaque && free < EMBEDDED_ROOM_BYTES))) return error;
  return new DiskFullError(
    'DISK_FULL',
    `The disk holding DATA_DIR is full: ${free} bytes free at ${dataDir}. The embedded database needs room to start ` +
      `(up to ${EMBEDDED_ROOM_BYTES / 2 ** 20} MB for a new write-ahead log segment): free some space and start again. (${(error as Error).message})`,
    { cause: error },
  );
}

/**
 * The embedded database's current thread. One lost to a PANIC or that died is replaced, at the
 * next call that needs it, by a new thread that opens the same data directory, as PostgreSQL's
 * postmaster restarts its server after a crash: PGlite replays the write-ahead log and every
 * committed transaction is there; one open on the lost thread is gone with it (rolled back). A
 * thread lost to a full disk is opened again only once the disk has room (`FullDiskWatch`): until
 * then every call fails at once with the disk's error.
 */
export class ReopeningThread {
  private reopening: Promise<PgliteThread> | undefined;
  private triedAt = -Infinity;

  constructor(
    private thread: PgliteThread,
    private readonly dataDir: string,
    private readonly disk: FullDiskWatch,
    private readonly log?: Pick<Logger, 'info' | 'warn'>,
  ) {}

  /** The thread to send to: the current one, or a new one when the current one was lost and could be replaced. */
  current(): Promise<PgliteThread> {
    const lost = this.thread.lost;
    if (!lost) return Promise.resolve(this.thread);
    this.reopening ??= this.reopen(lost).finally(() => {
      this.reopening = undefined;
    });
    return this.reopening;
  }

  /** Closes the database of the current thread (after a reopening under way) and ends it. */
  async close(): Promise<void> {
    await this.reopening?.catch(() => undefined);
    await this.thread.close();
  }

  private async reopen(lost: Error): Promise<PgliteThread> {
    if (isDiskFull(lost) ? (await this.disk.stillFull()) !== undefined : performance.now() - this.triedAt < REOPEN_INTERVAL_MS) throw lost;
    this.triedAt = performance.now();
    try {
      this.thread = await openThread(this.dataDir);
    } catch (error) {
      this.log?.warn({ err: error, lost: lost.message }, 'the embedded database could not be opened again');
      throw isDiskFull(error) ? error : lost;
    }
    this.log?.info({ lost: lost.message }, 'the embedded database was opened again on a new thread');
    return this.thread;
  }
}
