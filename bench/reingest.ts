/**
 * Re-ingestion with questions between: a knowledge base of BENCH_RECORDS (400) Markdown articles of
 * 2,000 characters is ingested, then ingested again BENCH_ROUNDS (10) times with every article's
 * text changed (same record ids: each round replaces every chunk), as an operator re-syncing a help
 * center does. After each round BENCH_QUESTIONS (20) vector searches are asked one at a time
 * through POST /api/v2/knowledge-bases/{id}/retrieve, each given 30 s (a round's jobs, 2 minutes:
 * one that does not end counts every question unanswered). On the engine DATABASE_URL
 * chooses (embedded PGlite without it: its vector graphs take every removal, decision 171).
 * Prints one JSON line: per round the chunks written, chunks/s, the questions' p50 and longest
 * latency and how many got no answer in time; the run stops at the first round with one, as the
 * server is then stuck. The API process's peak RSS and the load averages close it.
 *
 *   MODELS_DIR=/tmp/lore-test-models EMBEDDINGS_PROVIDER=builtin-fast npm run bench:reingest
 */
import { loadavg } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { markdownDocument, percentile, questions, round } from './corpus.ts';
import { benchDatabase, benchEnv, benchTenant, call, ingestJobs, startBenchServer } from './lore-server.ts';

const recordCount = Number(process.env.BENCH_RECORDS ?? 400);
const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
const questionCount = Number(process.env.BENCH_QUESTIONS ?? 20);
const QUESTION_TIMEOUT_MS = 30_000;
/** A round's jobs end within seconds here (400 articles: 5-8 s); one that has not after 2 minutes is stuck. */
const ROUND_TIMEOUT_MS = 120_000;

/** The articles of a round: the same ids, a different text each round. */
const articles = (round: number) =>
  Array.from({ length: recordCount }, (_, index) => {
    const { title, content } = markdownDocument(1 + index + round * 100_000, 2000);
    return { id: `article-${index}`, title, content, contentType: 'markdown' as const };
  });

const loadBefore = loadavg().map((value) => round(value, 2));
const database = await benchDatabase(process.env.DATABASE_URL);
const { server } = await startBenchServer(benchEnv(database));
const figures: { round: number; chunks: number; chunksPerSecond: number; questionMs: { p50: number; max: number }; unanswered: number }[] = [];
try {
  const base = server.url;
  const { token } = await benchTenant(base, 'reingest');
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'help center' });
  for (let index = 0; index <= rounds; index++) {
    const started = performance.now();
    const jobs = await Promise.race([
      ingestJobs(base, token, knowledgeBase.id, articles(index), 200),
      delay(ROUND_TIMEOUT_MS, undefined, { ref: false }),
    ]);
    const seconds = (performance.now() - started) / 1000;
    if (!jobs) {
      figures.push({ round: index, chunks: 0, chunksPerSecond: 0, questionMs: { p50: 0, max: 0 }, unanswered: questionCount });
      break;
    }
    const chunks = jobs.reduce((sum, job) => sum + (job.result?.embeddingsGenerated ?? 0), 0);
    const latencies: number[] = [];
    let unanswered = 0;
    for (const question of questions(questionCount, index + 1)) {
      const asked = performance.now();
      const response = await fetch(`${base}/api/v2/knowledge-bases/${knowledgeBase.id}/retrieve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: question, mode: 'vector', topK: 10 }),
        signal: AbortSignal.timeout(QUESTION_TIMEOUT_MS),
      }).catch(() => undefined);
      if (response?.status !== 200) unanswered++;
      else latencies.push(performance.now() - asked);
      await response?.arrayBuffer();
      if (!response) break;
    }
    figures.push({
      round: index,
      chunks,
      chunksPerSecond: round(chunks / seconds),
      questionMs: { p50: round(percentile(latencies, 0.5)), max: round(Math.max(0, ...latencies)) },
      unanswered,
    });
    if (unanswered > 0) break;
  }
} finally {
  console.log(
    JSON.stringify({
      bench: 'reingest',
      engine: server.context.db.engine,
      records: recordCount,
      rounds: figures,
      stuck: figures.some((figure) => figure.unanswered > 0),
      peakRssMb: round(process.resourceUsage().maxRSS / 1024, 0),
      loadAverage: { before: loadBefore, after: loadavg().map((value) => round(value, 2)) },
    }),
  );
}
// A database thread stuck in native code never ends, and `process.exit` waits for it: the process
// kills itself (its line is written: stdout to a file or pipe is synchronous on Linux).
if (figures.some((figure) => figure.unanswered > 0)) process.kill(process.pid, 'SIGKILL');
await server.close();
await database.drop();
