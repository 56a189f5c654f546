/**
 * What the answer-quality benches (bench:answers, bench:squad) share: lore started on a database
 * of its own that `--data-dir DIR` (PGlite only) keeps between runs together with what was
 * ingested into it, so that a change to the query path is measured again without ingesting;
 * questions asked through POST /api/v2/query, a few in flight; shares of verdicts; the JSON line.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { percentile, round } from './corpus.ts';
import { benchDatabase, benchEnv, benchTenant, call, startBenchServer, type BenchDatabase } from './lore-server.ts';

/** What a kept database must record for a later run: where the questions go, and whose vectors it holds. */
export type KeptState = { embedder: string; workspaceId: string; knowledgeBaseId: string; experienceId: string; ingest: Record<string, unknown> };

/** What a bench measures with: the server's address, a token of the workspace, what was ingested, and the server's providers. */
export type AnswerRun<State extends KeptState> = {
  base: string;
  token: string;
  state: State;
  /** Whether `state` was ingested by an earlier run (`--data-dir`). */
  reused: boolean;
  /** The experience's fallback message: what a declined question is answered. */
  fallbackMessage: string;
  engine: string;
  embedder: string;
  generator: string;
};

export type AnswerBenchOptions<State extends KeptState> = {
  /** Names the workspace and the file of the kept state (`<name>-bench.json` in the data directory). */
  name: string;
  /** A PGlite directory kept between runs; without it a fresh database (PGlite, or on DATABASE_URL) is dropped at the end. */
  dataDir: string | undefined;
  /** Ingests into a new knowledge base behind a new public experience; called once per database. */
  ingest(base: string, token: string, workspaceId: string, embedder: string): Promise<State>;
  /** Asks the questions. */
  measure(run: AnswerRun<State>): Promise<Measured>;
  /** Where to write every verdict, as JSON. */
  report: string | undefined;
};

/** What a bench measured, printed as one JSON line around the server's providers, the latencies and the ingestion. */
export type Measured = {
  /** The fields that say what was asked (the split, how many questions), first on the line. */
  lead: Record<string, unknown>;
  summary: Record<string, unknown>;
  /** Milliseconds of each query. */
  latencies: number[];
  /** What the knowledge base holds, after the latencies. */
  corpus: Record<string, unknown>;
  /** Every question with its answer and verdict, for `report`. */
  verdicts: unknown[];
};

/** What the ingestion's jobs did, as the kept state records it. */
export function ingestSummary(jobs: any[], seconds: number): Record<string, unknown> {
  const sum = (field: string) => jobs.reduce((total, job) => total + (job.result?.[field] ?? 0), 0);
  return {
    seconds: round(seconds),
    jobs: jobs.length,
    failedJobs: jobs.filter((job) => job.status !== 'completed').length,
    entriesCreated: sum('entriesCreated'),
    entriesFailed: sum('entriesFailed'),
    chunks: sum('embeddingsGenerated'),
  };
}

async function keptDatabase(dir: string): Promise<BenchDatabase> {
  await mkdir(dir, { recursive: true });
  return { env: { DATA_DIR: dir }, drop: async () => undefined };
}

/** Starts lore, ingests unless the data directory already holds the state, measures, and stops the server and its database. */
export async function runAnswerBench<State extends KeptState>(options: AnswerBenchOptions<State>): Promise<void> {
  const { dataDir } = options;
  if (dataDir && process.env.DATABASE_URL) throw new Error('--data-dir keeps a PGlite database; it does not apply with DATABASE_URL.');
  const database = dataDir ? await keptDatabase(dataDir) : await benchDatabase(process.env.DATABASE_URL);
  const statePath = dataDir ? join(dataDir, `${options.name}-bench.json`) : undefined;
  const kept = statePath && existsSync(statePath) ? (JSON.parse(await readFile(statePath, 'utf8')) as State) : undefined;
  const { server } = await startBenchServer(
    benchEnv(database, {
      INGESTION_WORKERS: process.env.INGESTION_WORKERS ?? '1',
      // One visitor asking hundreds of questions is the benchmark, not abuse.
      RATE_LIMIT_IP_PER_MINUTE: '1000000',
      RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
    }),
  );
  try {
    const embedder = `${server.context.embedder.name}/${server.context.embedder.model}`;
    if (kept && kept.embedder !== embedder) throw new Error(`${dataDir} holds vectors of ${kept.embedder}; use another --data-dir.`);
    const base = server.url;
    let state = kept;
    let token: string;
    if (state) {
      token = (await benchTenant(base, `${options.name}-reuse`, state.workspaceId)).token;
    } else {
      const tenant = await benchTenant(base, options.name);
      token = tenant.token;
      state = await options.ingest(base, token, tenant.workspaceId, embedder);
      if (statePath) await writeFile(statePath, JSON.stringify(state));
    }
    const experience = await call(base, 'GET', `/api/v2/experiences/${state.experienceId}`, token);
    const run = {
      base,
      token,
      state,
      reused: kept !== undefined,
      fallbackMessage: experience.fallbackMessage,
      engine: server.context.db.engine,
      embedder,
      generator: server.context.generators().name,
    };
    const started = performance.now();
    const measured = await options.measure(run);
    const querySeconds = round((performance.now() - started) / 1000);
    if (options.report) await writeFile(options.report, `${JSON.stringify(measured.verdicts, null, 2)}\n`);
    console.log(
      JSON.stringify({
        ...measured.lead,
        engine: run.engine,
        embedder,
        generator: run.generator,
        ...measured.summary,
        latencyMs: { p50: round(percentile(measured.latencies, 0.5)), p95: round(percentile(measured.latencies, 0.95)) },
        ...measured.corpus,
        ingest: { ...state.ingest, reused: run.reused },
        querySeconds,
      }),
    );
  } finally {
    await server.close();
    await database.drop();
  }
}

/** A source of an answer, as POST /api/v2/query returns it. */
export type AnsweredSource = { number: number; title: string; url: string | null; snippet: string; score: number };

export type Asked = { answer: string; sources: AnsweredSource[]; sessionId: string; ms: number; body: any };

/** Asks one question of a public experience, in `sessionId` or a new session. */
export async function ask(base: string, experienceId: string, text: string, sessionId?: string): Promise<Asked> {
  const started = performance.now();
  const response = await fetch(`${base}/api/v2/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ experienceId, text, ...(sessionId ? { sessionId } : {}) }),
  });
  const body = (await response.json()) as any;
  if (response.status !== 200) throw new Error(`query ${JSON.stringify(text)}: ${response.status} ${JSON.stringify(body)}`);
  return { answer: body.answer, sources: body.sources, sessionId: body.sessionId, ms: performance.now() - started, body };
}

/** `work` for every item with at most `concurrency` in flight; the results in the items' order. */
export async function inFlight<Item, Result>(items: readonly Item[], concurrency: number, work: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, runner));
  return results;
}

/** The share of true items, to three decimals; null when there are none. */
export const share = (items: boolean[]) => (items.length === 0 ? null : round(items.filter(Boolean).length / items.length, 3));
