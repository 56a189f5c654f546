/**
 * The round trip of one query-budget check in Redis on loopback, through the client lore uses
 * (src/features/query/rate-limit-redis.ts) and @fastify/rate-limit's own script, one at a time and
 * 50 at once; then the same client with its redis-server stopped (SIGSTOP) and continued. A
 * redis-server of its own on a free port, never the shared one. `npm run bench:redis-latency`.
 */
// @ts-expect-error: the store has no type declarations; its contract is incr(key, callback, timeWindow, max).
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import pino from 'pino';
import { RateLimitRedis } from '../src/features/query/rate-limit-redis.ts';
import { PrivateRedis } from '../test/private-redis.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const IN_FLIGHT = 50;

type Store = { incr(key: string, callback: (error: Error | null) => void, timeWindow: number, max: number): void };

const server = await PrivateRedis.start();
const logged: string[] = [];
const redis = new RateLimitRedis(server.url, pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line).msg) }));
await redis.connect();
const store: Store = new RedisStore(false, false, redis.client, 'bench:');

/** One budget check; its time in ms and its error, if any. */
function check(key: string): Promise<{ ms: number; error?: string }> {
  const started = performance.now();
  return new Promise((resolve) => store.incr(key, (error) => resolve({ ms: performance.now() - started, error: error?.message }), 60_000, 1_000_000));
}

function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!.toFixed(3);
  return `p50 ${at(0.5)}, p99 ${at(0.99)}, p99.9 ${at(0.999)}, max ${sorted.at(-1)!.toFixed(3)} ms`;
}

try {
  const alone: number[] = [];
  for (let index = 0; index < CALLS; index += 1) alone.push((await check(`ip:${index % 100}`)).ms);
  console.log(`one at a time, ${CALLS} checks: ${summary(alone)}`);
  const together: number[] = [];
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, lane) => {
      for (let index = 0; index < CALLS / IN_FLIGHT; index += 1) together.push((await check(`lane:${lane}`)).ms);
    }),
  );
  console.log(`${IN_FLIGHT} at once, ${CALLS} checks: ${summary(together)}`);

  server.stop();
  const stopped: Array<{ ms: number; error?: string }> = [];
  const stoppedAt = performance.now();
  while (performance.now() - stoppedAt < 3_000) {
    stopped.push(await check('stopped'));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const failed = stopped.filter((outcome) => outcome.error);
  console.log(
    `stopped for 3 s, a check every 20 ms: ${failed.length} of ${stopped.length} failed; the first took ${stopped[0]!.ms.toFixed(1)} ms, ` +
      `the others at most ${Math.max(...stopped.slice(1).map((outcome) => outcome.ms)).toFixed(1)} ms`,
  );
  server.resume();
  const resumedAt = performance.now();
  while ((await check('resumed')).error) await new Promise((resolve) => setTimeout(resolve, 20));
  console.log(`continued: checks succeed again after ${Math.round(performance.now() - resumedAt)} ms; logged: ${JSON.stringify(logged)}`);
} finally {
  await redis.close();
  await server.close();
}
