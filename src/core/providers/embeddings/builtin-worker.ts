/**
 * One thread of the builtin embedder: loads the encoder once, then embeds the batches the pool
 * sends, one at a time, and answers each with one flat Float32Array (transferred, not copied).
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { loadEncoder } from './use-lite.ts';

/** One batch; a thread works on one at a time, so answers need no id. */
export type WorkerRequest = { texts: string[] };
export type WorkerMessage =
  | { type: 'ready'; loadMs: number }
  | { type: 'load-failed'; error: string }
  | { type: 'done'; vectors: Float32Array }
  | { type: 'failed'; error: string };

const port = parentPort!;
const started = performance.now();
// On Linux the nice value belongs to the thread (setpriority(2), "Bugs"), so this lowers this
// embedding thread only: the HTTP thread preempts it at once instead of waiting for its time slice.
if (process.platform === 'linux') setPriority(0, 10);

try {
  const encoder = await loadEncoder();
  port.postMessage({ type: 'ready', loadMs: performance.now() - started } satisfies WorkerMessage);
  port.on('message', async (request: WorkerRequest) => {
    try {
      const vectors = await encoder.embed(request.texts);
      port.postMessage({ type: 'done', vectors } satisfies WorkerMessage, [vectors.buffer as ArrayBuffer]);
    } catch (error) {
      port.postMessage({ type: 'failed', error: describe(error) } satisfies WorkerMessage);
    }
  });
} catch (error) {
  port.postMessage({ type: 'load-failed', error: describe(error) } satisfies WorkerMessage);
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
