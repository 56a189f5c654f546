/**
 * What ranking from the posting lists in memory costs the API process, without HTTP or the other
 * statements around it: on a database kept by `bench:query` (BENCH_REUSE=<its DATA_DIR>), loads the
 * lists of BENCH_QUESTIONS (600) help-centre questions, then ranks each BENCH_ROUNDS (3) times at
 * the query path's depth (BENCH_K, 75: 15 chunks × 5 candidates) and takes the keyword coverage of
 * its first 15, as a hybrid question does. Prints one JSON line: milliseconds per question in
 * `PostingLists.topK` and in `idfSums`, and the postings a question's lists hold, summed whole and
 * only searched for candidates (MaxScore).
 *
 *   BENCH_REUSE=/tmp/lore-bench-XXXXXX npm run bench:posting-lists
 */
import { loadavg } from 'node:os';
import { openDb } from '../src/core/db/open.ts';
import { keywordSearch } from '../src/features/retrieval/keyword/keyword-search.ts';
import { PostingLists } from '../src/features/retrieval/keyword/posting-lists.ts';
import { helpQuestions } from './help-center.ts';
import { keptDatabase } from './kept-database.ts';

const questionCount = Number(process.env.BENCH_QUESTIONS ?? 600);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const k = Number(process.env.BENCH_K ?? 75);
const kept = keptDatabase();

const db = await openDb({ dataDir: kept.env.DATA_DIR, databaseUrl: kept.env.DATABASE_URL, databasePoolSize: 2, ingestionLeaseSeconds: 60 });
const lists = new PostingLists();
const spent = { topK: 0, idfSums: 0 };
const timed = <T>(stage: keyof typeof spent, work: () => T): T => {
  const started = performance.now();
  try {
    return work();
  } finally {
    spent[stage] += performance.now() - started;
  }
};
const topK = lists.topK.bind(lists);
const idfSums = lists.idfSums.bind(lists);
lists.topK = (...args) => timed('topK', () => topK(...args));
lists.idfSums = (...args) => timed('idfSums', () => idfSums(...args));

const questions = helpQuestions(questionCount, kept.built.articles, 42);
const inputOf = (query: string) => ({ workspaceId: kept.built.workspaceId, knowledgeBaseIds: [kept.built.knowledgeBaseId], query, topK: k, mode: 'hybrid' as const });
for (const query of questions) {
  await keywordSearch(db, inputOf(query), k, lists);
  await lists.settled();
}
const loadAverage = loadavg()[0]!;
spent.topK = spent.idfSums = 0;
const before = { ...lists.counts };
let asked = 0;
for (let round = 0; round < rounds; round += 1) {
  for (const query of questions) {
    const ranking = await keywordSearch(db, inputOf(query), k, lists);
    ranking.coverage?.(ranking.ranking.slice(0, 15).map((item) => item.id));
    asked += 1;
  }
}
await db.close();

const round = (value: number) => Math.round(value * 1000) / 1000;
console.log(
  JSON.stringify({
    chunks: kept.built.chunks,
    engine: kept.env.DATABASE_URL ? 'postgres' : 'pglite',
    questions: asked,
    k,
    fromMemory: lists.counts.hits - before.hits,
    topKMsPerQuestion: round(spent.topK / asked),
    idfSumsMsPerQuestion: round(spent.idfSums / asked),
    postingsPerQuestion: {
      summed: Math.round((lists.counts.postingsSummed - before.postingsSummed) / asked),
      searched: Math.round((lists.counts.postingsScanned - before.postingsScanned) / asked),
    },
    loadAverage: [round(loadAverage), round(loadavg()[0]!)],
  }),
);
