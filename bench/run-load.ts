/** Runs loads of query-load.ts in a child process and reads its figures. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadSpec } from './query-load.ts';

export type { LoadSpec };

export type LoadFigures = {
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number };
  p99WithTimeoutsMs: number;
  answered: number;
  non2xx: number;
  status5xx: number;
  errors: number;
  timeouts: number;
};

/** Runs `specs` at the same time in one child process (see query-load.ts); their figures, in order. */
export async function runLoads(specs: LoadSpec[]): Promise<LoadFigures[]> {
  const script = fileURLToPath(new URL('./query-load.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(specs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  return JSON.parse(output) as LoadFigures[];
}
