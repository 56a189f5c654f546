/**
 * How long `lore start` takes to listen, and the CPU it has spent by then (every thread of it:
 * PGlite's, the encoder's, the ingestion worker's): first on a new database (initdb on PGlite,
 * the migrations, the first start's secrets), then BENCH_RESTARTS times more on the same database,
 * as after a deploy or a crash. Prints one JSON line. With DATABASE_URL, on a database of its own
 * on that server, dropped at the end.
 *
 *   BENCH_MODELS_DIR=/tmp/lore-test-models npm run bench:start
 */
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoreServer } from '../test/lore-process.ts';
import { percentile, round } from './corpus.ts';
import { benchDatabase, TOKEN_SECRET } from './lore-server.ts';
import { processCpuMs } from './process-cpu.ts';

const restarts = Number(process.env.BENCH_RESTARTS ?? 5);
const serverUrl = process.env.DATABASE_URL;

type Start = { listenMs: number; cpuMs: number };

/** Starts `lore start` on `env`, waits for it to listen, reads its CPU, and stops it. */
async function timeStart(env: Record<string, string>, cwd: string): Promise<Start> {
  const started = performance.now();
  const server = LoreServer.start({ env, cwd });
  try {
    await server.listening();
    const listenMs = performance.now() - started;
    const cpuMs = await processCpuMs(server.pid);
    if (cpuMs === undefined) throw new Error('lore start exited right after it listened');
    const exit = await server.stop();
    if (exit.code !== 0) throw new Error(`lore start ended with ${JSON.stringify(exit)}:\n${server.stderr}`);
    return { listenMs: round(listenMs), cpuMs };
  } finally {
    await server.kill();
  }
}

const summary = (values: number[]) => ({ p50: round(percentile(values, 0.5)), max: round(Math.max(...values)) });

const database = await benchDatabase(serverUrl);
try {
  const env = {
    ...database.env,
    PORT: '0',
    HOST: '127.0.0.1',
    // "lore is listening" is an info line.
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    MODELS_DIR: process.env.BENCH_MODELS_DIR ?? join(tmpdir(), 'lore-bench-models'),
    ...(serverUrl ? { TOKEN_SECRET } : {}),
  };
  const loadBefore = loadavg()[0]!;
  const first = await timeStart(env, database.env.DATA_DIR!);
  const again: Start[] = [];
  for (let run = 0; run < restarts; run++) again.push(await timeStart(env, database.env.DATA_DIR!));
  console.log(
    JSON.stringify({
      engine: serverUrl ? 'postgres' : 'pglite',
      firstStart: first,
      restarts: {
        runs: restarts,
        listenMs: summary(again.map((start) => start.listenMs)),
        cpuMs: summary(again.map((start) => start.cpuMs)),
      },
      loadAverage: [round(loadBefore), round(loadavg()[0]!)],
    }),
  );
} finally {
  await database.drop();
}
