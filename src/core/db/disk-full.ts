import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errorTable, type ErrorCode } from '../errors.ts';

/**
 * A statement, or a file lore writes, found the disk full. Nothing is wrong with the request: the
 * HTTP layer answers 507 with the message of `code`, whatever the detail of this error's own
 * message (which may name a path and a size, for logs and start-up).
 */
export class DiskFullError extends Error {
  constructor(
    /** Whose disk: DATA_DIR's (the embedded engine, lore's own files) or the database server's. */
    readonly code: Extract<ErrorCode, 'DISK_FULL' | 'DATABASE_DISK_FULL'>,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DiskFullError';
  }
}

// SQLSTATE 53100 is disk_full: PostgreSQL could not extend a table or index ("could not extend
// file"), or write its WAL (a PANIC). ENOSPC is Node's. PGlite's file system reaches PostgreSQL
// as the C library's errno, which PostgreSQL reports in its text only (for instance the FATAL of a
// start-up that cannot write postmaster.pid): strerror(ENOSPC), in any of its logs.
const DISK_FULL_CODES = new Set(['53100', 'ENOSPC']);
const NO_SPACE_TEXT = /No space left on device/i;

/** Whether `error` means that the disk it wrote to is full. */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof DiskFullError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && DISK_FULL_CODES.has(code)) return true;
  if (error instanceof AggregateError && error.errors.some(isDiskFull)) return true;
  return NO_SPACE_TEXT.test(error.message);
}

/** Bytes an unprivileged writer can still write on the file system holding `path` (or its nearest existing parent). */
export async function freeBytes(path: string): Promise<number> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await statfs(at);
      return stats.bavail * stats.bsize;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
}

/**
 * The free space after which the embedded engine counts its disk as having room again. PostgreSQL
 * writes its WAL in 16 MB segment files (wal_segment_size), each created whole when the one before
 * is full: with less free, the next one fails with a PANIC (pglite-thread.ts), and a start that
 * replays the WAL after a crash may need one too (a start with 4 MB free failed, measured).
 */
export const EMBEDDED_ROOM_BYTES = 16 * 2 ** 20;

/**
 * What the embedded engine knows of DATA_DIR's disk: full from the moment a statement or a start
 * met it full, until EMBEDDED_ROOM_BYTES are free on it again. A disk no statement met full is not
 * looked at: statfs says nothing of a write that was never tried.
 */
export class FullDiskWatch {
  private full = false;

  constructor(private readonly path: string) {}

  /** `error` as a DiskFullError when the disk was full (the disk is noted full), else as it is. */
  translate(error: unknown): unknown {
    if (!isDiskFull(error)) return error;
    this.full = true;
    return error instanceof DiskFullError ? error : new DiskFullError('DISK_FULL', errorTable.DISK_FULL.message, { cause: error });
  }

  /** The free bytes while the disk is noted full; undefined once it has room again (or was never full). */
  async stillFull(): Promise<number | undefined> {
    if (!this.full) return undefined;
    const free = await freeBytes(this.path);
    if (free < EMBEDDED_ROOM_BYTES) return free;
    this.full = false;
    return undefined;
  }
}
