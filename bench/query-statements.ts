/**
 * Where a question's CPU goes, statement by statement, on PostgreSQL: runs lore on a database kept
 * by `bench:query` (BENCH_REUSE=<its DATA_DIR>, `BENCH_KEEP=1` with a DATABASE_URL), asks
 * BENCH_WARM_QUESTIONS (200) questions to load the posting lists, then BENCH_QUESTIONS (200) more
 * one at a time, and reads each statement's database CPU from its backend's
 * `/proc/<pid>/schedstat` (nanoseconds of CPU, so a loaded machine changes it little) before and
 * after it: one at a time, nothing else runs on that backend meanwhile. Prints one JSON line: per
 * statement (its first 60 characters) the database CPU per question and its wall time per call,
 * the database and API process CPU per question, and the wall time per question.
 *
 *   BENCH_REUSE=/tmp/lore-bench-XXXXXX npm run bench:query-statements
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { helpQuestions } from './help-center.ts';
import { keptDatabase } from './kept-database.ts';
import { benchEnv, startBenchServer } from './lore-server.ts';

const warmQuestions = Number(process.env.BENCH_WARM_QUESTIONS ?? 200);
const questionCount = Number(process.env.BENCH_QUESTIONS ?? 200);
const provider = process.env.BENCH_PROVIDER ?? 'builtin-fast';
const kept = keptDatabase();
if (!kept.env.DATABASE_URL) throw new Error('The kept database is PGlite: backends to measure exist on PostgreSQL only');

type Spent = { calls: number; cpuMs: number; wallMs: number };
const statements = new Map<string, Spent>();
let measuring = false;

function backendCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

// The pool calls `client.query(text or config, values, callback)`; every other call passes through as it is.
type Callback = (error: Error | null, result: unknown) => void;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client & { processID?: number }, ...args: unknown[]) {
  const [config, values, callback] = args;
  const pid = this.processID;
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
  if (!measuring || !pid || typeof text !== 'string' || typeof callback !== 'function') return query.apply(this, args);
  const label = text.replace(/\s+/g, ' ').trim().slice(0, 60);
  const cpu = backendCpuMs(pid);
  const started = performance.now();
  return query.call(this, config, values, (error: Error | null, result: unknown) => {
    const spent = statements.get(label) ?? { calls: 0, cpuMs: 0, wallMs: 0 };
    spent.calls += 1;
    spent.cpuMs += backendCpuMs(pid) - cpu;
    spent.wallMs += performance.now() - started;
    statements.set(label, spent);
    (callback as Callback)(error, result);
  });
} as typeof pg.Client.prototype.query;

const { server } = await startBenchServer(
  benchEnv(
    { env: kept.env, drop: async () => undefined },
    {
      EMBEDDINGS_PROVIDER: provider,
      INGESTION_WORKERS: '0',
      LOG_LEVEL: 'fatal',
      RATE_LIMIT_IP_PER_MINUTE: '1000000',
      RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
      RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
    },
  ),
);
const questions = helpQuestions(warmQuestions + questionCount, kept.built.articles, 42);
async function ask(text: string): Promise<void> {
  const response = await fetch(`${server.url}/api/v2/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ experienceId: kept.built.experienceId, text }),
  });
  if (response.status !== 200) throw new Error(`POST /api/v2/query: ${response.status} ${await response.text()}`);
  await response.json();
}

for (const text of questions.slice(0, warmQuestions)) await ask(text);
const loadAverage = loadavg()[0]!;
measuring = true;
const cpu = process.cpuUsage();
const started = performance.now();
for (const text of questions.slice(warmQuestions)) await ask(text);
const wallMs = performance.now() - started;
const api = process.cpuUsage(cpu);
measuring = false;
await server.close();

const round = (value: number) => Math.round(value * 1000) / 1000;
const sorted = [...statements].sort((a, b) => b[1].cpuMs - a[1].cpuMs);
const databaseMs = sorted.reduce((sum, [, spent]) => sum + spent.cpuMs, 0);
console.log(
  JSON.stringify({
    chunks: kept.built.chunks,
    provider,
    questions: questionCount,
    databaseCpuMsPerQuestion: round(databaseMs / questionCount),
    // The client that asks runs in this process too, so this includes its fetch calls.
    apiCpuMsPerQuestion: round((api.user + api.system) / 1000 / questionCount),
    wallMsPerQuestion: round(wallMs / questionCount),
    statements: sorted.map(([statement, spent]) => ({
      statement,
      calls: spent.calls,
      cpuMsPerQuestion: round(spent.cpuMs / questionCount),
      wallMsPerCall: round(spent.wallMs / spent.calls),
    })),
    loadAverage: [round(loadAverage), round(loadavg()[0]!)],
  }),
);
process.exit(0);
