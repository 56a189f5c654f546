import type { Worker } from 'node:worker_threads';
import { spawnWorker } from '../../../../core/spawn-worker.ts';
import { boundExceeded, subjectOf, type ExtractionBounds } from './bounds.ts';
import { DocumentError } from './document-error.ts';
import type { Extracted, ExtractedFormat } from '../adapter.ts';
import type { ExtractionAnswer, ExtractionRequest } from './extraction-thread.ts';

/**
 * An idle extraction thread is stopped after this long: it holds pdf.js, mammoth and turndown, and
 * whatever its heap kept of the last file. Starting one again costs 1.2-2.4 s on a 2-core machine
 * (tsx compiles the modules in the new thread), once per job of documents after a pause, on the
 * extraction thread, not the HTTP one.
 */
const IDLE_MS = 30_000;

type Pending = { format: ExtractedFormat; resolve(extracted: Extracted): void; reject(error: Error): void; timer: NodeJS.Timeout };

/**
 * Extracts documents on a thread of their own, one file at a time, so that no document can stall
 * the thread that serves HTTP and renews the job's lease (a Flate bomb held it for minutes). The
 * thread's heap is capped at `memoryMb` (Worker resourceLimits) and each file at `timeoutMs`:
 * a file that exceeds either, or crashes the thread, fails with that reason, and the next file
 * gets a new thread. One extractor per ingestion worker, its thread started at the first document.
 */
export class DocumentExtractor {
  private thread: Promise<Worker> | undefined;
  private current: Worker | undefined;
  private pending: Pending | undefined;
  private idle: NodeJS.Timeout | undefined;

  constructor(private readonly bounds: ExtractionBounds) {}

  /** The text of one file; throws a DocumentError naming the bound it exceeds or why it cannot be read. */
  async extract(format: ExtractedFormat, bytes: Uint8Array): Promise<Extracted> {
    clearTimeout(this.idle);
    const thread = await (this.thread ??= this.start());
    try {
      return await new Promise<Extracted>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.fail(thread, () => boundExceeded(format, `${this.bounds.timeoutMs / 1000} seconds per file (EXTRACTION_TIMEOUT_MS)`, 'its extraction was stopped'));
        }, this.bounds.timeoutMs);
        this.pending = { format, resolve, reject, timer };
        // A copy, transferred: the caller keeps its bytes, and the thread gets them without a second copy.
        const copy = new Uint8Array(bytes);
        thread.postMessage({ format, bytes: copy, bounds: this.bounds } satisfies ExtractionRequest, [copy.buffer]);
      });
    } finally {
      this.idle = setTimeout(() => void this.close(), IDLE_MS).unref();
    }
  }

  /** Stops the thread. */
  async close(): Promise<void> {
    clearTimeout(this.idle);
    const thread = this.current;
    this.thread = undefined;
    this.current = undefined;
    await thread?.terminate();
  }

  private start(): Promise<Worker> {
    const thread = spawnWorker('extraction-thread', import.meta.url, { resourceLimits: { maxOldGenerationSizeMb: this.bounds.memoryMb } });
    let starting = true;
    return new Promise((resolve, reject) => {
      const startFailed = (reason: string) => {
        starting = false;
        this.thread = undefined;
        reject(new Error(`The document extraction thread did not start: ${reason}`));
      };
      // Every event has a listener for the thread's whole life: an 'error' without one would take the process down.
      thread.on('error', (error: Error & { code?: string }) => {
        if (starting) return startFailed(error.message);
        this.fail(thread, (format) =>
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? boundExceeded(format, `${this.bounds.memoryMb} MB of memory per file (EXTRACTION_MEMORY_LIMIT_MB)`, 'its extraction was stopped')
            : new DocumentError(`${subjectOf(format)} stopped its extraction: ${error.message}`),
        );
      });
      thread.on('exit', (code) => {
        if (starting) return startFailed(`exit code ${code}`);
        this.fail(thread, (format) => new DocumentError(`${subjectOf(format)} stopped its extraction (exit code ${code}).`));
      });
      thread.on('message', (answer: ExtractionAnswer) => {
        if (answer.type === 'ready') {
          starting = false;
          this.current = thread;
          resolve(thread);
          return;
        }
        const pending = this.settle();
        if (answer.type === 'done') pending?.resolve(answer.extracted);
        else pending?.reject(new DocumentError(answer.error));
      });
    });
  }

  /** Ends the file in progress with the error `reason` gives, and the thread with it: the next file starts a new one. */
  private fail(thread: Worker, reason: (format: ExtractedFormat) => Error): void {
    const pending = this.settle();
    pending?.reject(reason(pending.format));
    if (this.current === thread) {
      this.current = undefined;
      this.thread = undefined;
    }
    void thread.terminate();
  }

  private settle(): Pending | undefined {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) clearTimeout(pending.timer);
    return pending;
  }
}
