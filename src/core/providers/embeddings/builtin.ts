import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { QUESTION_HOLD_MS } from '../../question-hold.ts';
import { spawnWorker } from '../../spawn-worker.ts';
import type { WorkerMessage, WorkerRequest } from './builtin-worker.ts';
import { batches, embedDeduplicated, normalize, type EmbeddingProvider, type EmbedOptions } from './provider.ts';

/** Vector size of the Universal Sentence Encoder (kept here: importing the encoder would load TensorFlow.js into this thread). */
const DIMENSION = 512;

// bench:tool-trigger (bench/README.md, "Tools"): on CLINC150 val with 5 examples a tool, the
// smallest threshold that lets at most 2 % of out-of-scope questions trigger a tool (0.017); on
// test it triggers 0.95 of a tool's questions, 0.026 of out-of-scope and 0.072 of other tools' ones.
const TOOL_COSINE = 0.5;

export type BuiltinEmbeddingOptions = {
  /** Worker threads, each with its own copy of the model (default: one per core). */
  threads?: number;
  /** Texts per batch sent to one thread (default 16). */
  batchSize?: number;
  /** The similarity from which a question triggers a tool (TOOLS_MATCH_COSINE; default: the one measured for this encoder). */
  toolCosine?: number | undefined;
};

type Task = {
  texts: string[];
  /** A batch of a bulk call (ingestion), not a question. */
  bulk: boolean;
  resolve(vectors: Float32Array): void;
  reject(error: unknown): void;
};

type Thread = {
  worker: Worker;
  ready: Promise<number>;
  loaded: boolean;
  task: Task | undefined;
};

/**
 * The Universal Sentence Encoder lite, offline, on a pool of worker threads so that embedding
 * never blocks the event loop and uses every core. Threads start, and load the model, at the
 * first `embed` (or `warmUp`), so a process that never embeds never pays for it.
 */
export class BuiltinEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'builtin';
  readonly model = 'universal-sentence-encoder-lite';
  readonly dimension = DIMENSION;
  // bench:answers dev (bench/history.md, "Answers on real documentation"): off-topic questions came no closer than 0.26
  // to any chunk, answerable ones no farther than 0.43 from their best.
  readonly relevantCosine = 0.35;
  readonly toolCosine: number;
  private readonly threadCount: number;
  private readonly batchSize: number;
  private readonly threads: Thread[] = [];
  /** Batches of other calls (ingestion), in arrival order. */
  private readonly queue: Task[] = [];
  /**
   * Batches of questions (`EmbedOptions.question`), in arrival order: they go before bulk batches, and
   * those waiting together share one batch, which embeds short texts several times faster than
   * one at a time (171 against 73 sentences/s in bench/history.md).
   */
  private readonly questions: Task[] = [];
  /** When (`performance.now()`) the last question was asked or answered. */
  private lastQuestion = -Infinity;
  /** Hands out bulk batches again when the hold after the last question lapses. */
  private holdTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: BuiltinEmbeddingOptions = {}) {
    this.threadCount = options.threads ?? availableParallelism();
    this.batchSize = options.batchSize ?? 16;
    this.toolCosine = options.toolCosine ?? TOOL_COSINE;
  }

  /** Starts the threads and waits until each has loaded the model; resolves to the slowest load in ms. */
  async warmUp(): Promise<number> {
    this.startThreads();
    const loads = await Promise.all(this.threads.map((thread) => thread.ready));
    return Math.max(...loads);
  }

  embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new Error('The builtin embedder is closed.'));
    return embedDeduplicated(texts, async (distinct) => {
      const parts = batches(distinct, this.batchSize);
      const question = options.question === true;
      const tasks = parts.map((part) => this.task(part, !question));
      if (question) {
        this.questions.push(...tasks.map(({ task }) => task));
        this.lastQuestion = performance.now();
      } else this.queue.push(...tasks.map(({ task }) => task));
      // The first failure, or the caller's abort, drops the call's batches that no thread has taken.
      const drop = (reason: unknown) => {
        for (const { task } of tasks) {
          for (const waiting of [this.questions, this.queue]) {
            const queued = waiting.indexOf(task);
            if (queued >= 0) waiting.splice(queued, 1);
          }
          task.reject(reason);
        }
      };
      const signal = options.signal;
      const onAbort = () => drop(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      this.startThreads();
      this.dispatch();
      try {
        const results = await Promise.all(tasks.map(({ done }) => done));
        return results.flatMap((flat, part) =>
          parts[part]!.map((_, row) => normalize(flat.slice(row * DIMENSION, (row + 1) * DIMENSION))),
        );
      } catch (error) {
        drop(error);
        throw error;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.holdTimer);
    const error = new Error('The builtin embedder was closed.');
    for (const task of this.takeAll()) task.reject(error);
    await Promise.all(this.threads.splice(0).map((thread) => thread.worker.terminate()));
  }

  private task(texts: string[], bulk: boolean): { task: Task; done: Promise<Float32Array> } {
    let task!: Task;
    const done = new Promise<Float32Array>((resolve, reject) => {
      task = { texts, bulk, resolve, reject };
    });
    // Rejections are observed through `Promise.all`; one that comes after the call failed is moot.
    done.catch(() => {});
    return { task, done };
  }

  /** Every batch no thread has taken yet. */
  private takeAll(): Task[] {
    return [...this.questions.splice(0), ...this.queue.splice(0)];
  }

  /** The next batch for an idle thread: the waiting questions together, else the next bulk batch. */
  private next(): Task | undefined {
    if (this.questions.length === 0) return this.queue.shift();
    const joined: Task[] = [];
    let count = 0;
    while (this.questions.length > 0 && (joined.length === 0 || count + this.questions[0]!.texts.length <= this.batchSize)) {
      const task = this.questions.shift()!;
      joined.push(task);
      count += task.texts.length;
    }
    if (joined.length === 1) return joined[0];
    return {
      texts: joined.flatMap((task) => task.texts),
      bulk: false,
      resolve: (vectors) => {
        let offset = 0;
        for (const task of joined) {
          task.resolve(vectors.slice(offset * DIMENSION, (offset + task.texts.length) * DIMENSION));
          offset += task.texts.length;
        }
      },
      reject: (error) => joined.forEach((task) => task.reject(error)),
    };
  }

  /** Hands waiting batches to idle threads that have loaded the model. */
  private dispatch(): void {
    for (const thread of this.threads) {
      if (this.questions.length === 0 && this.queue.length === 0) return;
      if (!thread.loaded || thread.task) continue;
      if (this.questions.length === 0 && !this.bulkMayTakeAThread()) return;
      const task = this.next()!;
      thread.task = task;
      // A busy thread keeps the process alive; an idle one must not hold it open.
      thread.worker.ref();
      thread.worker.postMessage({ texts: task.texts } satisfies WorkerRequest);
    }
  }

  /**
   * Whether a bulk batch may take an idle thread: not the last one free while questions come
   * (QUESTION_HOLD_MS), so that a question does not wait for a bulk batch to end: 16 chunks of 560
   * characters take 650 ms on one thread here, a question 7 ms. On PGlite, 20 question connections
   * during an ingestion answered 63-77 questions/s instead of 35-50, p99 1.86-2.27 times idle
   * instead of 2.14-3.40, while the job wrote about 30 % fewer records (decision 168).
   */
  private bulkMayTakeAThread(): boolean {
    const holdLeft = QUESTION_HOLD_MS - (performance.now() - this.lastQuestion);
    if (holdLeft <= 0 || this.threads.length < 2) return true;
    if (this.threads.filter((thread) => thread.task?.bulk).length < this.threads.length - 1) return true;
    // No batch may end before the hold does: look again then. A busy thread keeps the process alive, not this.
    this.holdTimer ??= setTimeout(() => {
      this.holdTimer = undefined;
      this.dispatch();
    }, holdLeft).unref();
    return false;
  }

  private startThreads(): void {
    while (!this.closed && this.threads.length < this.threadCount) this.threads.push(this.spawn());
  }

  private spawn(): Thread {
    const worker = spawnWorker('./builtin-worker', import.meta.url);
    worker.unref();
    let markReady: (loadMs: number) => void = () => {};
    let markFailed: (error: Error) => void = () => {};
    const thread: Thread = {
      worker,
      loaded: false,
      task: undefined,
      ready: new Promise<number>((resolve, reject) => {
        markReady = resolve;
        markFailed = reject;
      }),
    };
    // `warmUp` may never be awaited; its rejection is reported through the queued tasks instead.
    thread.ready.catch(() => {});
    const finish = (outcome: { vectors: Float32Array } | { error: Error }) => {
      const task = thread.task;
      thread.task = undefined;
      worker.unref();
      if (task) {
        // The hold runs from a question's answer too: one that waited a second for a bulk batch
        // would otherwise have used its hold up by the time its asker could ask the next.
        if (!task.bulk) this.lastQuestion = performance.now();
        if ('vectors' in outcome) task.resolve(outcome.vectors);
        else task.reject(outcome.error);
      }
      this.dispatch();
    };
    const retire = (error: Error) => {
      const index = this.threads.indexOf(thread);
      if (index < 0) return;
      this.threads.splice(index, 1);
      markFailed(error);
      if (!thread.loaded) {
        // The model cannot load: every waiting batch would fail the same way.
        for (const task of this.takeAll()) task.reject(error);
      } else if (this.questions.length > 0 || this.queue.length > 0) {
        this.startThreads();
      }
      finish({ error });
      void worker.terminate();
    };
    worker.on('message', (message: WorkerMessage) => {
      switch (message.type) {
        case 'ready':
          thread.loaded = true;
          markReady(message.loadMs);
          this.dispatch();
          break;
        case 'load-failed':
          retire(new Error(`The builtin embedder could not load its model: ${message.error}`));
          break;
        case 'done':
          finish({ vectors: message.vectors });
          break;
        case 'failed':
          finish({ error: new Error(`The builtin embedder failed: ${message.error}`) });
          break;
      }
    });
    worker.on('error', (error) => retire(error));
    worker.on('exit', (code) => {
      if (!this.closed) retire(new Error(`A builtin embedder thread stopped with exit code ${code}.`));
    });
    return thread;
  }
}
