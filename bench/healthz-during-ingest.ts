/**
 * Requests while a bulk ingestion runs in the same process: on the engine DATABASE_URL chooses
 * (embedded PGlite without it), fills a knowledge base of BENCH_QUERY_RECORDS (300) help-center
 * articles behind a public experience, then probes the server for BENCH_SECONDS (20) twice, idle
 * and while an ingestion job of BENCH_RECORDS (3,000) articles of 2,000 characters runs in an
 * ingestion worker of the same process: GET /healthz every 20 ms and questions one at a time (the
 * probe runs in a child process, bench/latency-probe.ts), with the server thread's event-loop delay.
 * Prints one JSON line: p50/p99/max of each phase, the job's records/s during the probe, and the
 * load averages (1, 5, 15 min) before and after each phase.
 *
 *   npm run bench:healthz-during-ingest
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:healthz-during-ingest
 *
 * The embedder is EMBEDDINGS_PROVIDER (default builtin-fast), its table kept in MODELS_DIR (default
 * $TMPDIR/lore-bench-models, distilled at the first run, about a minute).
 */
import { spawn } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { round } from './corpus.ts';
import { finished, startBulkJob, waitForJob } from './bulk-job.ts';
import type { ProbeFigures, ProbeSpec } from './latency-probe.ts';
import { benchDatabase, benchEnv, benchTenant, call, startBenchServer } from './lore-server.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const queryRecords = Number(process.env.BENCH_QUERY_RECORDS ?? 300);
const bulkRecords = Number(process.env.BENCH_RECORDS ?? 3000);
const HEALTHZ_EVERY_MS = 20;
const RECORD_SIZE = 2000;

type Phase = {
  healthzMs: ProbeFigures;
  queryMs: ProbeFigures;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  loadAverage: { before: number[]; after: number[] };
};

const load = () => loadavg().map((value) => round(value, 2));

/** Probes `base` for `seconds` from a child process while the event-loop delay of this process is recorded. */
async function probe(spec: ProbeSpec): Promise<Phase> {
  const before = load();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const script = fileURLToPath(new URL('./latency-probe.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  delay.disable();
  if (code !== 0) throw new Error(`the latency probe exited with ${code}`);
  const { healthz, query } = JSON.parse(output) as { healthz: ProbeFigures; query: ProbeFigures };
  const ms = (nanoseconds: number) => round(nanoseconds / 1e6);
  return {
    healthzMs: healthz,
    queryMs: query,
    eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
    loadAverage: { before, after: load() },
  };
}

const database = await benchDatabase(process.env.DATABASE_URL);
const env = benchEnv(database, {
  // The jobs run in ingestion workers of this process that bench/bulk-job.ts starts, one per job.
  INGESTION_WORKERS: '0',
  MODELS_DIR: process.env.MODELS_DIR ?? join(tmpdir(), 'lore-bench-models'),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'fatal',
  // Every probe comes from 127.0.0.1 into one workspace: the default budgets would answer 429.
  RATE_LIMIT_IP_PER_MINUTE: '1000000',
  RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
  RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
});
const { config, server } = await startBenchServer(env);
try {
  const base = server.url;
  const { token } = await benchTenant(base, 'bench');
  const started = performance.now();
  const answers = await startBulkJob(server, config, token, { records: queryRecords, recordSize: RECORD_SIZE });
  const filled = await waitForJob(base, token, answers.jobId, finished);
  await answers.stop();
  if (filled.status !== 'completed') throw new Error(`the knowledge base to query was not filled: ${JSON.stringify(filled).slice(0, 300)}`);
  const fillSeconds = round((performance.now() - started) / 1000);
  const experience = await call(base, 'POST', '/api/v2/experiences', token, { name: 'help', knowledgeBaseIds: [answers.knowledgeBaseId], requireAuth: false });
  const spec = { base, seconds, healthzEveryMs: HEALTHZ_EVERY_MS, experienceId: experience.id, articles: queryRecords };
  // Warm-up (JIT, caches), not measured.
  await probe({ ...spec, seconds: 3, skip: 0 });
  const idle = await probe({ ...spec, skip: 1000 });

  const bulk = await startBulkJob(server, config, token, { records: bulkRecords, recordSize: RECORD_SIZE });
  let ingest: Phase;
  let first: any;
  let last: any;
  try {
    // The probe starts once the job writes, not while it is claimed and its payload parsed.
    first = await waitForJob(base, token, bulk.jobId, (job) => job.data.progress.processed > 0 || finished(job));
    ingest = await probe({ ...spec, skip: 2000 });
    last = await waitForJob(base, token, bulk.jobId, () => true);
  } finally {
    await call(base, 'DELETE', `/api/v2/data-ingestion/jobs/${bulk.jobId}`, token).catch(() => undefined);
    await bulk.stop();
  }
  const ratio = (during: number, before: number) => round(during / before, 2);
  console.log(
    JSON.stringify({
      engine: server.context.db.engine,
      embedder: server.context.embedder.name,
      seconds,
      queryKnowledgeBase: { records: queryRecords, fillSeconds },
      idle,
      ingest: {
        ...ingest,
        // Still processing when the probe ended: the whole window was during the job.
        jobStatusAfter: last.status,
        recordsPerSecond: round((last.data.progress.processed - first.data.progress.processed) / seconds),
      },
      ratios: {
        healthzP99: ratio(ingest.healthzMs.p99, idle.healthzMs.p99),
        queryP99: ratio(ingest.queryMs.p99, idle.queryMs.p99),
        eventLoopDelayP99: ratio(ingest.eventLoopDelayMs.p99, idle.eventLoopDelayMs.p99),
      },
      targets: { healthzP99DuringIngestMs: 50, queryP99DuringIngestOverIdle: 3 },
    }),
  );
} finally {
  await server.close();
  await database.drop();
}
