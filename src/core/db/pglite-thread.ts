import type { Worker } from 'node:worker_threads';
import { spawnWorker } from '../spawn-worker.ts';
import type { PgliteMessage, PgliteReply, PgliteRequest, ThreadError } from './pglite-worker.ts';
import { isDiskFull } from './disk-full.ts';
import { DatabaseUnavailableError } from './unavailable.ts';

type Pending = { request: PgliteRequest; resolve(value: unknown): void; reject(error: Error): void };

/**
 * The embedded database's own thread, seen from the main thread. PGlite's WebAssembly took 74 % of
 * the event loop under query load, and while an ingestion job wrote in the same process queries
 * took 0.1-4.3 s instead of 20-60 ms and /healthz stalled; on a thread of its own, the thread that
 * serves HTTP only posts requests and reads answers.
 *
 * Each request is answered by its id. Rows cross by structured clone, which keeps every type PGlite
 * returns (Date, number, string, arrays, jsonb objects, Uint8Array); errors are rebuilt with their
 * PostgreSQL fields. Should the thread die, or PostgreSQL in it panic, every pending and later
 * call rejects with DatabaseUnavailableError (503 with Retry-After at the HTTP layer), or with the
 * panic's own error when it was a full disk, rather than the process ending; `lost` then says why
 * (pglite.ts opens the database again on a new thread).
 */
export class PgliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Why calls fail from now on: the thread died, or was closed. */
  private ended: Error | undefined;
  private closed = false;

  constructor() {
    this.worker = spawnWorker('./pglite-worker', import.meta.url);
    // Held open only while a call waits (see `call`), as a main-thread PGlite never held the process.
    this.worker.unref();
    this.worker.on('message', (reply: PgliteReply) => this.settle(reply));
    this.worker.on('error', (error) => this.stop(new DatabaseUnavailableError(error)));
    this.worker.on('exit', (code) => {
      this.stop(new DatabaseUnavailableError(new Error(`The embedded database thread stopped with exit code ${code}.`)));
    });
  }

  /** Sends one request; resolves to the thread's answer. */
  call<T>(request: PgliteRequest): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { request, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ id, request } satisfies PgliteMessage);
      } catch (error) {
        // A parameter structured clone cannot copy (a function, a class instance's private state).
        this.forget(id);
        reject(error as Error);
      }
    });
  }

  /** Why this thread can no longer answer, unless it was closed: it died, or PostgreSQL in it panicked. */
  get lost(): Error | undefined {
    return this.closed ? undefined : this.ended;
  }

  /** Closes the database, then ends the thread; calls after this reject. */
  async close(): Promise<void> {
    if (this.ended) return;
    try {
      await this.call({ kind: 'close' });
    } finally {
      this.closed = true;
      this.ended = new Error('The embedded database is closed.');
      await this.worker.terminate();
    }
  }

  /**
   * Ends the thread without closing the database, as a crash would: what is pending, and every
   * later call, rejects with DatabaseUnavailableError (used when the database could not be opened).
   */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private forget(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
    return pending;
  }

  private settle(reply: PgliteReply): void {
    const pending = this.forget(reply.id);
    if (!pending) return;
    if (!('error' in reply)) {
      pending.resolve(reply.value);
      return;
    }
    const error = revive(reply.error, pending.request);
    pending.reject(error);
    if (endsDatabase(reply.error)) {
      // What was sent after it would find the broken session: it fails now, and the thread goes.
      this.stop(isDiskFull(error) ? error : new DatabaseUnavailableError(error));
      void this.worker.terminate();
    }
  }

  /** Rejects every waiting call, and every later one, with `reason` (the first reason stands). */
  private stop(reason: Error): void {
    this.ended ??= reason;
    for (const id of [...this.pending.keys()]) this.forget(id)!.reject(this.ended);
  }
}

/**
 * After a PANIC PostgreSQL's postmaster ends every session and restarts the server; PGlite's one
 * session carries on broken instead: after a PANIC on a WAL segment the full disk could not hold,
 * the next statement failed with "XLogBeginInsert was already called" and the ones after it never
 * answered (10 s each, measured). After a WebAssembly abort (Emscripten's `Aborted()`) nothing runs.
 */
function endsDatabase(thrown: ThreadError): boolean {
  return thrown.fields.severity === 'PANIC' || thrown.message.startsWith('Aborted(');
}

/** The thread's error as an Error of this thread, with the fields callers and logs read (code, detail, constraint, ...). */
function revive(thrown: ThreadError, request: PgliteRequest): Error {
  const error = Object.assign(new Error(thrown.message), thrown.fields);
  if (thrown.stack) error.stack = thrown.stack;
  if (request.kind === 'query') Object.assign(error, { query: request.text, params: request.values });
  if (request.kind === 'exec') Object.assign(error, { query: request.text });
  return error;
}
