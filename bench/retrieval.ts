/**
 * Retrieval quality on BEIR SciFact through the real paths: starts lore on a database of its own
 * (PGlite in a temporary directory, or a fresh database on the PostgreSQL server DATABASE_URL
 * names), ingests the corpus as generic-json jobs (id = document id, title, content = text), then
 * asks every judged query of each split through POST /api/v2/knowledge-bases/{id}/retrieve in the
 * keyword, vector and hybrid modes (topK 100) and prints one JSON line per split: nDCG@10,
 * recall@10 and recall@100 per mode, with the engine, the embedder and the timings.
 *
 *   npm run bench:retrieval [-- DATASET_DIR] [--split train|test|train,test] [--docs N] [--data-dir DIR] [--modes keyword,vector,hybrid]
 *
 * The retrieve route answers chunks; a document's rank is that of its best chunk, so the top 100
 * chunks hold fewer than 100 documents and recall@100 counts the documents among them.
 * `--docs N` indexes the judged documents plus N random others (see bench/scifact.ts): faster,
 * higher scores, comparable only between runs on the same subsample. `--data-dir DIR` (PGlite
 * only) keeps the ingested database in DIR and reuses it on the next run with the same corpus, so
 * that ranking settings can be tuned without ingesting again. `--copies N` measures latency on a
 * knowledge base N times larger without embedding N times: after the ingestion, its entries and
 * chunks are copied N - 1 times in SQL (record ids `<id>~c`, the same vectors and full-text
 * vectors; the keyword statistics follow through the same triggers as ingestion). A copy counts
 * as its original in the metrics, so with copies only the latencies are meaningful. The data set is read where it lies
 * (default /work/shared/datasets/scifact), never copied. Tune on `train`; `test` is for reporting.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BuiltinEmbeddingProvider } from '../src/core/providers/embeddings/builtin.ts';
import { exhaustiveKeywordSearch, keywordSearch, type KeywordRanking } from '../src/features/retrieval/keyword/keyword-search.ts';
import { PostingLists } from '../src/features/retrieval/keyword/posting-lists.ts';
import type { RetrieveInput } from '../src/features/retrieval/retrieve-input.ts';
import { percentile, round } from './corpus.ts';
import { benchDatabase, benchEnv, benchTenant, call, ingestJobs, startBenchServer, type BenchDatabase } from './lore-server.ts';
import { DEFAULT_SCIFACT_DIR, quality, readSciFact, type Query } from './scifact.ts';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    split: { type: 'string', default: 'test' },
    docs: { type: 'string' },
    seed: { type: 'string', default: '1' },
    'data-dir': { type: 'string' },
    modes: { type: 'string', default: 'keyword,vector,hybrid' },
    copies: { type: 'string', default: '1' },
    // Queries in flight at once: the figures are quality, not load, so a few keep the run short.
    concurrency: { type: 'string', default: '4' },
  },
});
const MODES = options.modes.split(',');
if (MODES.some((mode) => !['keyword', 'vector', 'hybrid'].includes(mode))) throw new Error('--modes lists keyword, vector and hybrid.');
const TOP_K = 100;
const RECORDS_PER_JOB = 500;
const dataset = positionals[0] ?? DEFAULT_SCIFACT_DIR;
const splitNames = options.split.split(',');
const docs = options.docs === undefined ? undefined : Number(options.docs);
const copies = Number(options.copies);
const scifact = await readSciFact(dataset, splitNames, docs, Number(options.seed));
if (options['data-dir'] && process.env.DATABASE_URL) throw new Error('--data-dir keeps a PGlite database; it does not apply with DATABASE_URL.');

/** What a kept database holds, so that a later run with the same corpus can reuse it. */
type Kept = { corpus: string; documents: number; copies: number; workspaceId: string; knowledgeBaseId: string; ingest: Record<string, unknown> };

async function keptDatabase(dir: string): Promise<BenchDatabase> {
  await mkdir(dir, { recursive: true });
  return { env: { DATA_DIR: dir }, drop: async () => undefined };
}

const database = options['data-dir'] ? await keptDatabase(options['data-dir']) : await benchDatabase(process.env.DATABASE_URL);
const statePath = options['data-dir'] ? join(options['data-dir'], 'scifact-bench.json') : undefined;
const kept = statePath && existsSync(statePath) ? (JSON.parse(await readFile(statePath, 'utf8')) as Kept) : undefined;
if (kept && (kept.corpus !== scifact.corpus || kept.documents !== scifact.documents.length || kept.copies !== copies)) {
  throw new Error(`${options['data-dir']} holds another corpus (${kept.corpus}); use another --data-dir.`);
}
const { server } = await startBenchServer(benchEnv(database, { INGESTION_WORKERS: process.env.INGESTION_WORKERS ?? '1' }));

/** Ingests the corpus into a new knowledge base; the stage figures of the jobs, summed. */
async function ingestCorpus(base: string, token: string, workspaceId: string): Promise<Kept> {
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'scifact' });
  // Model loading is not ingestion.
  const { embedder } = server.context;
  await (embedder instanceof BuiltinEmbeddingProvider ? embedder.warmUp() : embedder.embed(['warm up']));
  const records = scifact.documents.map((document) => ({ id: document._id, title: document.title, content: document.text }));
  let started = performance.now();
  const jobs = await ingestJobs(base, token, knowledgeBase.id, records, RECORDS_PER_JOB);
  const seconds = (performance.now() - started) / 1000;
  started = performance.now();
  for (let copy = 1; copy < copies; copy += 1) await copyKnowledgeBase(workspaceId, knowledgeBase.id, copy);
  const copySeconds = (performance.now() - started) / 1000;
  const sum = (field: string) => jobs.reduce((total, job) => total + job.result[field], 0);
  return {
    corpus: scifact.corpus,
    documents: scifact.documents.length,
    copies,
    workspaceId,
    knowledgeBaseId: knowledgeBase.id,
    ingest: {
      seconds: round(seconds),
      jobs: jobs.length,
      failedJobs: jobs.filter((job) => job.status !== 'completed').length,
      entriesCreated: sum('entriesCreated'),
      entriesSkipped: sum('entriesSkipped'),
      entriesFailed: sum('entriesFailed'),
      chunks: sum('embeddingsGenerated'),
      chunksPerSecond: round(sum('embeddingsGenerated') / seconds),
      ...(copies > 1 ? { copySeconds: round(copySeconds) } : {}),
    },
  };
}

/** Copy `copy` of the ingested entries and their chunks, in one statement (see `--copies`). */
async function copyKnowledgeBase(workspaceId: string, knowledgeBaseId: string, copy: number): Promise<void> {
  await server.context.db.query(
    `WITH originals AS (
       SELECT * FROM entries WHERE workspace_id = $1 AND knowledge_base_id = $2 AND record_id NOT LIKE '%~%'
     ), copied AS (
       INSERT INTO entries (workspace_id, knowledge_base_id, source_id, record_id, title, content, content_type, url, tags, metadata,
         content_hash, chunk_count, job_id, job_created_at)
       SELECT workspace_id, knowledge_base_id, source_id, record_id || '~' || $3, title, content, content_type, url, tags, metadata,
         content_hash || '~' || $3, chunk_count, job_id, job_created_at
       FROM originals RETURNING id, record_id
     )
     INSERT INTO chunks (workspace_id, knowledge_base_id, entry_id, ordinal, text, heading_path, start_offset, end_offset, text_hash,
       embedding, embedding_dimension, search_vector)
     SELECT c.workspace_id, c.knowledge_base_id, copied.id, c.ordinal, c.text, c.heading_path, c.start_offset, c.end_offset, c.text_hash,
       c.embedding, c.embedding_dimension, c.search_vector
     FROM copied JOIN originals o ON o.record_id || '~' || $3 = copied.record_id JOIN chunks c ON c.workspace_id = $1 AND c.entry_id = o.id`,
    [workspaceId, knowledgeBaseId, String(copy)],
  );
}

/** Every query in every mode: the documents ranked by their best chunk, and the latency of each call. */
async function ask(base: string, token: string, knowledgeBaseId: string, queries: Query[]) {
  const rankings = Object.fromEntries(MODES.map((mode) => [mode, new Map<string, string[]>()]));
  const latencies = Object.fromEntries(MODES.map((mode) => [mode, [] as number[]]));
  const work = queries.flatMap((query) => MODES.map((mode) => ({ query, mode })));
  let next = 0;
  const runner = async () => {
    while (next < work.length) {
      const { query, mode } = work[next++]!;
      const started = performance.now();
      const answer = await call(base, 'POST', `/api/v2/knowledge-bases/${knowledgeBaseId}/retrieve`, token, { query: query.text, mode, topK: TOP_K });
      latencies[mode]!.push(performance.now() - started);
      const documents = [...new Set((answer.results as { recordId: string }[]).map((result) => result.recordId.split('~')[0]!))];
      rankings[mode]!.set(query._id, documents);
    }
  };
  await Promise.all(Array.from({ length: Number(options.concurrency) }, runner));
  return { rankings, latencies };
}

/**
 * The pruned keyword search (`keyword_top_k`, and MaxScore over the posting lists in memory)
 * against the exhaustive sum of every posting, called directly one query at a time: the share of queries whose top 10 (and top 50, the hybrid depth)
 * are the same chunks in the same order, nDCG@10 of both (top 100, documents by their best chunk),
 * and the latency of each statement.
 */
async function comparePruning(state: Kept, queries: Query[], qrels: Map<string, Set<string>>) {
  const { db } = server.context;
  const documentsOf = async (ranking: KeywordRanking) => {
    const ids = ranking.ranking.map((item) => item.id);
    const { rows } = await db.query<{ id: string; record_id: string }>(
      'SELECT c.id, e.record_id FROM chunks c JOIN entries e ON e.id = c.entry_id AND e.workspace_id = c.workspace_id WHERE c.workspace_id = $1 AND c.id = ANY($2::uuid[])',
      [state.workspaceId, ids],
    );
    const records = new Map(rows.map((row) => [row.id, row.record_id.split('~')[0]!]));
    return [...new Set(ids.map((id) => records.get(id)!))];
  };
  // The posting lists in memory (MaxScore over them), loaded first for every query, as the query
  // path ranks a question whose lists the process holds.
  const lists = new PostingLists();
  const inputOf = (query: Query) => ({ workspaceId: state.workspaceId, knowledgeBaseIds: [state.knowledgeBaseId], query: query.text, topK: 10, mode: 'keyword' as const });
  for (const query of queries) {
    await keywordSearch(db, inputOf(query), 10, lists);
    await lists.settled();
  }
  const fromMemory = async (target: typeof db, input: RetrieveInput, k: number) => {
    const { hits } = lists.counts;
    const ranking = await keywordSearch(target, input, k, lists);
    if (lists.counts.hits === hits) throw new Error(`"${input.query}" was not ranked from memory`);
    return ranking;
  };
  const searches = { pruned: keywordSearch, memory: fromMemory, exhaustive: exhaustiveKeywordSearch };
  const latencies: Record<string, number[]> = {};
  const rankings = { pruned: new Map<string, string[]>(), memory: new Map<string, string[]>(), exhaustive: new Map<string, string[]>() };
  const identical: Record<number, number> = { 10: 0, 50: 0 };
  const identicalFromMemory: Record<number, number> = { 10: 0, 50: 0 };
  for (const query of queries) {
    const input = inputOf(query);
    const tops: Record<string, Record<number, string>> = { pruned: {}, memory: {}, exhaustive: {} };
    for (const k of [10, 50, TOP_K]) {
      for (const [name, search] of Object.entries(searches)) {
        const started = performance.now();
        const ranking = await search(db, input, k);
        (latencies[`${name}${k}`] ??= []).push(performance.now() - started);
        tops[name]![k] = JSON.stringify(ranking.ranking);
        if (k === TOP_K) rankings[name as keyof typeof rankings].set(query._id, await documentsOf(ranking));
      }
    }
    for (const k of [10, 50]) {
      if (tops.pruned![k] === tops.exhaustive![k]) identical[k]! += 1;
      if (tops.memory![k] === tops.exhaustive![k]) identicalFromMemory[k]! += 1;
    }
  }
  const p50 = (name: string) => round(percentile(latencies[name]!, 0.5), 2);
  return {
    top10Identical: round(identical[10]! / queries.length, 4),
    top50Identical: round(identical[50]! / queries.length, 4),
    fromMemory: { top10Identical: round(identicalFromMemory[10]! / queries.length, 4), top50Identical: round(identicalFromMemory[50]! / queries.length, 4) },
    ndcg10: {
      pruned: quality(rankings.pruned, qrels).ndcg10,
      memory: quality(rankings.memory, qrels).ndcg10,
      exhaustive: quality(rankings.exhaustive, qrels).ndcg10,
    },
    p50Ms: Object.fromEntries([10, 50, TOP_K].map((k) => [`top${k}`, { pruned: p50(`pruned${k}`), memory: p50(`memory${k}`), exhaustive: p50(`exhaustive${k}`) }])),
    p95Ms: { top50: { pruned: round(percentile(latencies.pruned50!, 0.95)), exhaustive: round(percentile(latencies.exhaustive50!, 0.95)) } },
  };
}

try {
  const base = server.url;
  let state = kept;
  let token: string;
  if (state) {
    // The kept workspace: a new token for it through a fresh client.
    token = (await benchTenant(base, 'scifact-reuse', state.workspaceId)).token;
  } else {
    const tenant = await benchTenant(base, 'scifact');
    token = tenant.token;
    state = await ingestCorpus(base, token, tenant.workspaceId);
    if (statePath) await writeFile(statePath, JSON.stringify(state));
  }
  const { embedder } = server.context;
  for (const [split, { queries, qrels }] of scifact.splits) {
    const started = performance.now();
    const { rankings, latencies } = await ask(base, token, state.knowledgeBaseId, queries);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      JSON.stringify({
        split,
        engine: server.context.db.engine,
        embedder: `${embedder.name}/${embedder.model}`,
        corpus: scifact.corpus,
        documents: scifact.documents.length,
        copies,
        queries: queries.length,
        topK: TOP_K,
        ...Object.fromEntries(
          MODES.map((mode) => [
            mode,
            { ...quality(rankings[mode]!, qrels), latencyMs: { p50: round(percentile(latencies[mode]!, 0.5)), p95: round(percentile(latencies[mode]!, 0.95)) } },
          ]),
        ),
        ingest: { ...state.ingest, reused: kept !== undefined },
        querySeconds: round(seconds),
        queryConcurrency: Number(options.concurrency),
        ...(MODES.includes('keyword') ? { keywordPruning: await comparePruning(state, queries, qrels) } : {}),
      }),
    );
  }
} finally {
  await server.close();
  await database.drop();
}
