/**
 * How long a loop on the thread that serves HTTP may run before it lets the event loop take a turn:
 * /healthz answers in 1-3 ms, so 5 ms slices keep its p99 within a few slices during an ingestion.
 */
const SLICE_MS = 5;

/**
 * A function to await between two pieces of a long computation on the main thread (embedding with
 * builtin-fast, HTML converted to Markdown): it yields to the event loop (setImmediate, so pending
 * I/O runs first) once `ms` have passed since the last yield, and costs a clock read otherwise.
 */
export function yieldEvery(ms = SLICE_MS): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < ms) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
}
