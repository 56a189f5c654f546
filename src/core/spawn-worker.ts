import { extname } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` (without extension) beside `base` (the caller's
 * `import.meta.url`), with `options` (resource limits). The sources are TypeScript run through
 * tsx (see bin/lore.js), and a worker thread starts without the parent's loader: `--import tsx`
 * in a worker's execArgv registers its hooks too late for the worker's own entry module on Node
 * 20, so the worker registers tsx itself before importing its entry.
 */
export function spawnWorker(name: string, base: string, options: WorkerOptions = {}): Worker {
  const extension = extname(new URL(base).pathname);
  const entry = new URL(`${name}${extension}`, base).href;
  if (extension !== '.ts') return new Worker(new URL(entry), options);
  return new Worker(
    `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
    { ...options, eval: true },
  );
}
