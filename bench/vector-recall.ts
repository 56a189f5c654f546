/**
 * How many of the exact nearest chunks PGlite's vector index (pglite-vectors.ts) finds: on a PGlite
 * database kept by `bench:retrieval --data-dir DIR` (SciFact ingested with builtin-fast), every
 * query of a split is embedded and searched twice, through the index as the query path searches
 * (its 75 nearest, at least 75 deep) and exactly (a sequential scan sorted by cosine distance).
 * Prints one JSON line: recall@10 and recall@75 of the index against the exact search (mean over
 * queries, and the share of queries whose top 10 is exact), both searches' p50 latency, and the
 * first search apart: it starts the graph's build and is answered by an exact scan meanwhile.
 * `build` is that build: the time from the first search until the graph is built, the process's
 * resident memory it took, and the longest wait of the database's other statements during it (a
 * `SELECT 1` asked again and again). Then the database is opened again and the queries are
 * searched one after another while the graph is built anew: `searchesDuringBuild`, their count
 * and p50. `--ef-search N` searches the index N deep.
 *
 *   npm run bench:vector-recall -- --data-dir DIR [--split test] [--ef-search 75] [--models-dir DIR]
 *
 * Stop the bench server first: PGlite has one owner.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPglite } from '../src/core/db/pglite.ts';
import { BuiltinFastEmbeddingProvider } from '../src/core/providers/embeddings/builtin-fast.ts';
import { VECTOR_SEARCH_DEFAULTS } from '../src/core/db/vector-search-defaults.ts';
import { cosineDistance } from '../src/features/retrieval/vector-index.ts';
import { percentile, round } from './corpus.ts';
import { DEFAULT_SCIFACT_DIR, readSciFact } from './scifact.ts';

const { values: options } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'models-dir': { type: 'string' },
    split: { type: 'string', default: 'test' },
    'ef-search': { type: 'string', default: String(VECTOR_SEARCH_DEFAULTS.efSearch) },
    dataset: { type: 'string', default: DEFAULT_SCIFACT_DIR },
  },
});
const dir = options['data-dir'];
if (!dir) throw new Error('--data-dir names a database kept by bench:retrieval.');
// The depth of the query path's hybrid search with its default topK (vector-search-defaults.ts).
const DEPTH = VECTOR_SEARCH_DEFAULTS.efSearch;
const efSearch = Number(options['ef-search']);

const kept = JSON.parse(await readFile(join(dir, 'scifact-bench.json'), 'utf8')) as { workspaceId: string; knowledgeBaseId: string };
const scifact = await readSciFact(options.dataset, [options.split]);
const queries = scifact.splits.get(options.split as 'test')!.queries;
const embedder = new BuiltinFastEmbeddingProvider({ modelsDir: options['models-dir'] ?? join(dir, 'models'), threads: 1 });
let db = await openPglite(join(dir, 'pgdata'));
try {
  const dimension = embedder.dimension;
  const { rows: counted } = await db.query<{ chunks: number }>(
    'SELECT count(*)::int AS chunks FROM chunks WHERE workspace_id = $1 AND knowledge_base_id = $2',
    [kept.workspaceId, kept.knowledgeBaseId],
  );
  const nearest = `SELECT c.id FROM chunks c
    WHERE c.workspace_id = $1 AND c.knowledge_base_id = ANY($2::uuid[]) AND c.embedding_dimension = ${dimension}
    ORDER BY ${cosineDistance(dimension, 3)} LIMIT ${DEPTH}`;
  const timed = async (run: () => Promise<string[]>) => {
    const started = performance.now();
    const ids = await run();
    return { ids, ms: performance.now() - started };
  };
  /** While `work` runs, another statement is asked again and again: the longest any waited, in ms. */
  const longestWait = async (work: Promise<unknown>) => {
    let running = true;
    void work.finally(() => (running = false)).catch(() => undefined);
    let longest = 0;
    while (running) {
      const started = performance.now();
      await db.query('SELECT 1');
      longest = Math.max(longest, performance.now() - started);
    }
    return round(longest, 1);
  };
  const vectors = await embedder.embed(queries.map((query) => query.text));
  const searched = (vector: Float32Array) =>
    timed(async () => {
      const search = { workspaceId: kept.workspaceId, knowledgeBaseIds: [kept.knowledgeBaseId], dimension, vector, limit: Math.max(DEPTH, efSearch) };
      return (await db.searchVectors!(search)).slice(0, DEPTH).map((match) => match.id);
    });

  // The first search starts the graph's build, and scans the table as every search does until it
  // is built: the build's time, the memory it takes, and how long other statements wait meanwhile.
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  const firstSearch = { ms: round((await searched(vectors[0]!)).ms, 1) };
  const otherStatementMaxMs = await longestWait(db.vectorGraphs!({ settled: true }));
  const build = { ms: round(performance.now() - started, 0), rssMb: round((process.memoryUsage().rss - rss) / 2 ** 20, 1), otherStatementMaxMs };

  const recall10: number[] = [];
  const recall75: number[] = [];
  const indexMs: number[] = [];
  const exactMs: number[] = [];
  for (const vector of vectors) {
    const indexed = await searched(vector);
    const exact = await timed(async () => (await db.query<{ id: string }>(nearest, [kept.workspaceId, [kept.knowledgeBaseId], vector])).rows.map((row) => row.id));
    const found = (k: number) => exact.ids.slice(0, k).filter((id) => indexed.ids.slice(0, k).includes(id)).length / Math.min(k, exact.ids.length);
    recall10.push(found(10));
    recall75.push(found(DEPTH));
    indexMs.push(indexed.ms);
    exactMs.push(exact.ms);
  }

  // Opened again, the graph is built anew: the questions asked meanwhile, one after another.
  await db.close();
  db = await openPglite(join(dir, 'pgdata'));
  const duringMs: number[] = [];
  const reopened = performance.now();
  for (let index = 0; duringMs.length === 0 || (await db.vectorGraphs!()).building > 0; index++) {
    duringMs.push((await searched(vectors[index % vectors.length]!)).ms);
  }
  const searchesDuringBuild = { count: duringMs.length, p50Ms: round(percentile(duringMs, 0.5), 1), untilBuiltMs: round(performance.now() - reopened, 0) };

  const mean = (values: number[]) => round(values.reduce((sum, value) => sum + value, 0) / values.length, 4);
  console.log(
    JSON.stringify({
      bench: 'vector-recall',
      split: options.split,
      queries: queries.length,
      chunks: counted[0]!.chunks,
      efSearch,
      recallAt10: mean(recall10),
      top10Exact: mean(recall10.map((value) => (value === 1 ? 1 : 0))),
      recallAt75: mean(recall75),
      firstSearch,
      build,
      searchesDuringBuild,
      indexP50Ms: round(percentile(indexMs, 0.5), 2),
      exactP50Ms: round(percentile(exactMs, 0.5), 2),
    }),
  );
} finally {
  await db.close();
  await embedder.close();
}
