/**
 * What a process that holds no posting lists yet pays for its first questions: on a database kept
 * by `bench:query` (BENCH_REUSE=<its DATA_DIR>), asks BENCH_QUESTIONS (300) help-centre keyword
 * searches at the query path's depth (75 candidates), BENCH_CONCURRENCY (50) at a time, through a
 * new `PostingLists`. A question waits for the lists it misses up to BENCH_WAIT_MS (the query
 * path's bound when unset; 0: not at all, each such question ranked by the database). Prints one
 * JSON line: the time for all of them, the p50 and largest question, and how many were ranked from
 * memory, after waiting, and by the database.
 *
 *   BENCH_REUSE=/tmp/lore-bench-XXXXXX npm run bench:cold-lists
 *   BENCH_REUSE=/tmp/lore-bench-XXXXXX BENCH_WAIT_MS=0 npm run bench:cold-lists
 */
import { loadavg } from 'node:os';
import { openDb } from '../src/core/db/open.ts';
import { keywordSearch } from '../src/features/retrieval/keyword/keyword-search.ts';
import { PostingLists } from '../src/features/retrieval/keyword/posting-lists.ts';
import { helpQuestions } from './help-center.ts';
import { keptDatabase } from './kept-database.ts';

const questionCount = Number(process.env.BENCH_QUESTIONS ?? 300);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
const waitMs = process.env.BENCH_WAIT_MS === undefined ? undefined : Number(process.env.BENCH_WAIT_MS);
const seed = Number(process.env.BENCH_SEED ?? 7);
const k = 75;
const kept = keptDatabase();

const db = await openDb({ dataDir: kept.env.DATA_DIR, databaseUrl: kept.env.DATABASE_URL, databasePoolSize: concurrency + 2, ingestionLeaseSeconds: 60 });
const lists = new PostingLists(waitMs === undefined ? {} : { waitMs });
const questions = helpQuestions(questionCount, kept.built.articles, seed);
const loadAverage = loadavg()[0]!;
const latencies: number[] = [];
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < questions.length) {
      const query = questions[next++]!;
      const asked = performance.now();
      await keywordSearch(db, { workspaceId: kept.built.workspaceId, knowledgeBaseIds: [kept.built.knowledgeBaseId], query, topK: k, mode: 'hybrid' }, k, lists);
      latencies.push(performance.now() - asked);
    }
  }),
);
const totalMs = performance.now() - started;
await lists.settled();
await db.close();

latencies.sort((a, b) => a - b);
const round = (value: number) => Math.round(value * 10) / 10;
const { hits, waited, misses, listsRead } = lists.counts;
console.log(
  JSON.stringify({
    chunks: kept.built.chunks,
    engine: kept.env.DATABASE_URL ? 'postgres' : 'pglite',
    questions: questions.length,
    concurrency,
    waitMs: waitMs ?? 'default',
    totalMs: round(totalMs),
    p50Ms: round(latencies[latencies.length >> 1]!),
    maxMs: round(latencies.at(-1)!),
    fromMemory: hits,
    afterWaiting: waited,
    fromDatabase: misses,
    listsRead,
    held: lists.held,
    loadAverage: [round(loadAverage), round(loadavg()[0]!)],
  }),
);
