/**
 * Job read benchmark: what GET /api/v2/data-ingestion/jobs/{jobId} costs for a finished job of
 * BENCH_JOB_RECORDS (5,000) records, whose body carries a result per record (about 640 KB). The
 * job is ingested for real (one-chunk help-center articles, by a worker of this process) on the
 * engine DATABASE_URL chooses, then the route is loaded with autocannon (a child process,
 * query-load.ts) for BENCH_SECONDS (15) each:
 *
 * - one connection (one GET at a time): p50, and CPU milliseconds per GET of the API process and,
 *   on PostgreSQL, of its database backends (bench/process-cpu.ts), with the API process's main
 *   thread profiled and its time split by what the code belongs to (bench/cpu-profile.ts);
 * - BENCH_CONNECTIONS (20): GETs per second, p50/p99, CPU per GET.
 *
 * Prints one JSON line.
 *
 *   npm run bench:job-get
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:job-get
 *
 * MODELS_DIR names a prepared builtin-fast table to skip distilling one (about a minute).
 */
import { loadavg } from 'node:os';
import { round } from './corpus.ts';
import { profiled } from './cpu-profile.ts';
import { finished, startBulkJob, waitForJob } from './bulk-job.ts';
import { benchDatabase, benchEnv, benchTenant, startBenchServer } from './lore-server.ts';
import { startCpuMeter } from './process-cpu.ts';
import { runLoads, type LoadSpec } from './run-load.ts';

const records = Number(process.env.BENCH_JOB_RECORDS ?? 5_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

const database = await benchDatabase(process.env.DATABASE_URL);
const { config, server } = await startBenchServer(benchEnv(database, { EMBEDDINGS_PROVIDER: 'builtin-fast', INGESTION_WORKERS: '0', LOG_LEVEL: 'fatal' }));
try {
  const { token } = await benchTenant(server.url, 'bench');
  const bulk = await startBulkJob(server, config, token, { records, recordSize: 300 });
  const job = await waitForJob(server.url, token, bulk.jobId, finished);
  await bulk.stop();
  if (job.status !== 'completed') throw new Error(`the job ended ${job.status}: ${JSON.stringify(job.result)}`);
  const url = `${server.url}/api/v2/data-ingestion/jobs/${bulk.jobId}`;
  const bodyBytes = Buffer.byteLength(await fetch(url, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.text()));
  const spec = (clients: number): LoadSpec => ({ url, method: 'GET', connections: clients, seconds, headers: { authorization: `Bearer ${token}` } });

  /** One load with the CPU it cost per answered GET. */
  const measured = async (clients: number) => {
    const loadAverage = loadavg().map((value) => round(value, 2));
    const meter = await startCpuMeter(database.env.DATABASE_URL);
    const [figures] = await runLoads([spec(clients)]);
    const cpu = await meter.stop();
    const answered = figures!.answered;
    return {
      connections: clients,
      ...figures!,
      cpuMsPerGet: { api: round(cpu.apiMs / answered, 2), database: round(cpu.databaseMs / answered, 2), total: round((cpu.apiMs + cpu.databaseMs) / answered, 2) },
      loadAverage,
    };
  };

  await runLoads([{ ...spec(1), seconds: 3 }]); // warm-up: JIT, pool, caches
  const { result: sequential, msByCategory } = await profiled(() => measured(1));
  const concurrent = await measured(connections);
  console.log(
    JSON.stringify({
      engine: server.context.db.engine,
      records,
      bodyBytes,
      seconds,
      sequential,
      // Main-thread milliseconds per GET by what the code belongs to, one GET at a time.
      apiMainThreadMsPerGet: Object.fromEntries(
        Object.entries(msByCategory)
          .sort(([, a], [, b]) => b - a)
          .map(([category, ms]) => [category, round(ms / sequential.answered, 2)]),
      ),
      concurrent,
    }),
  );
} finally {
  await server.close();
  await database.drop();
}
