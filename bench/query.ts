/**
 * Query load benchmark: builds a knowledge base of BENCH_CHUNKS (100,000) chunks on the engine
 * DATABASE_URL chooses (a fresh database on that PostgreSQL server, or embedded PGlite without
 * it), then loads three routes of the same process with autocannon, at each of BENCH_CONNECTIONS
 * (20,50) connections for BENCH_SECONDS (20) each: POST /api/v2/query (anonymous first turns of
 * a public experience, every request a different question), GET /healthz (what Fastify alone
 * costs) and an embed-only route (a small Fastify server of this process that embeds the question
 * with the server's own embedding provider instance: what the question's embedding alone costs).
 * Before the load, BENCH_PROFILE_QUERIES (200) queries are asked one at a time with every SQL
 * statement, embedding call and generator timed, to show where a query's time goes, and the
 * keyword search is timed alone (as the query path calls it, one question at a time). During
 * each load the CPU time of this process and, on PostgreSQL, of the database's backends is
 * counted (bench/process-cpu.ts). After the loads, the query load at the first connection count
 * runs once more while an ingestion job of BENCH_INGEST_RECORDS (2,000) articles runs in this
 * process (BENCH_INGEST_RECORDS=0: not run). Prints one JSON line per provider of BENCH_PROVIDERS
 * (default EMBEDDINGS_PROVIDER, else builtin), which begins with the summary: on PostgreSQL the
 * server's memory settings (`server`), chunks, keywordP50Ms, cpuMsPerQuery (at the last
 * connection count), queryRps and embedRps and ratio (per connection count), queryP99IdleMs and
 * queryP99DuringIngestMs.
 *
 * BENCH_MODE=mixed runs the mixed load instead: BENCH_MIXED_CONNECTIONS (200) connections for
 * BENCH_MIXED_SECONDS (60), half asking questions and half reading a finished job of
 * BENCH_JOB_RECORDS (5,000) records (GET /api/v2/data-ingestion/jobs/{jobId}, about 670 KB), and
 * prints per route its answers, errors, timeouts (no answer within 10 s) and percentiles.
 *
 *   npm run bench:query
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_PROVIDERS=builtin,builtin-fast npm run bench:query
 *   BENCH_CHUNKS=20000 BENCH_PROVIDERS=builtin-fast npm run bench:query                       # PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_MODE=mixed BENCH_PROVIDERS=builtin-fast npm run bench:query
 *
 * How the knowledge base is built: not through the ingestion jobs, whose HNSW inserts write about
 * 200 chunks/s on PostgreSQL and 40-90 on PGlite (8 to 40 minutes for 100,000 chunks, and the
 * builtin encoder would need more than an hour). Instead the articles of bench/help-center.ts are
 * cut by the real chunker, embedded by `builtin-fast` (the static table distilled from the builtin
 * encoder, same 512 dimensions), written with the same INSERTs as the ingestion's writeRecord
 * (search_vector computed by the same expression; the BM25 triggers fill keyword_postings as for
 * any insert) in batches, the HNSW index is created once afterwards by the ingestion's own
 * ensureVectorIndex, and the tables are vacuumed and analyzed. The knowledge base is then
 * labelled with the provider the server embeds queries with. For `builtin-fast` this is exactly
 * what ingestion would have stored. For `builtin` the chunk vectors are builtin-fast's, not the encoder's: vector
 * search does the same work (same dimension, same index, same candidates count), but its
 * similarities are lower than real ones would be; answers stay grounded because the relevance of a
 * source also counts the question's terms (see grounding.ts). The output gives the grounded share.
 *
 * BENCH_MODELS_DIR (default $TMPDIR/lore-bench-models) keeps builtin-fast's distilled table between
 * runs (the first run distils it, about a minute). BENCH_CPU_PROFILE=DIR writes a CPU profile of
 * this process (the server's main thread) during the query load at the first connection count.
 * BENCH_VACUUM=0 runs ANALYZE without VACUUM after the load (see buildKnowledgeBase).
 * BENCH_KEEP=1 keeps the database (printed on stderr, with its DATA_DIR) to examine plans
 * afterwards; drop it by hand. BENCH_REUSE=<that DATA_DIR> runs on a kept database instead of
 * building one (100,000 chunks take minutes to build; before/after comparisons share one), and
 * keeps it again.
 */
import type { Server as HttpServer, ServerResponse } from 'node:http';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import type { Config } from '../src/core/config.ts';
import type { AppContext } from '../src/core/context.ts';
import type { Db, Queryable } from '../src/core/db/db.ts';
import { BuiltinFastEmbeddingProvider } from '../src/core/providers/embeddings/builtin-fast.ts';
import { BuiltinEmbeddingProvider } from '../src/core/providers/embeddings/builtin.ts';
import type { EmbeddingProvider } from '../src/core/providers/embeddings/provider.ts';
import type { AnswerGenerator } from '../src/core/providers/generation/provider.ts';
import { chunkContent, DEFAULT_CHUNK_OPTIONS } from '../src/features/ingestion/pipeline/chunking/chunk-content.ts';
import { contentHash, sha256 } from '../src/features/ingestion/pipeline/content-hash.ts';
import { ensureVectorIndex } from '../src/features/ingestion/pipeline/embedding-lock.ts';
import { embeddingText } from '../src/features/ingestion/pipeline/embedding-text.ts';
import { keywordSearch } from '../src/features/retrieval/keyword/keyword-search.ts';
import { postingListsOf } from '../src/features/retrieval/keyword/posting-lists.ts';
import type { RunningServer } from '../src/server.ts';
import { finished, startBulkJob, waitForJob } from './bulk-job.ts';
import { percentile, round } from './corpus.ts';
import { article, helpQuestions } from './help-center.ts';
import { benchDatabase, benchEnv, benchTenant, call, startBenchServer, type BenchDatabase } from './lore-server.ts';
import { startCpuMeter, type CpuSpent } from './process-cpu.ts';
import { runLoads, type LoadFigures, type LoadSpec } from './run-load.ts';
import { KEPT_FILE, type Built, type Kept } from './kept-database.ts';

const chunkTarget = Number(process.env.BENCH_CHUNKS ?? 100_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const connectionCounts = (process.env.BENCH_CONNECTIONS ?? '20,50').split(',').map(Number);
const providers = (process.env.BENCH_PROVIDERS ?? process.env.EMBEDDINGS_PROVIDER ?? 'builtin').split(',');
const profileQueries = Number(process.env.BENCH_PROFILE_QUERIES ?? 200);
const modelsDir = process.env.BENCH_MODELS_DIR ?? join(tmpdir(), 'lore-bench-models');
const cpuProfileDir = process.env.BENCH_CPU_PROFILE;
const vacuum = process.env.BENCH_VACUUM !== '0';
const ingestRecords = Number(process.env.BENCH_INGEST_RECORDS ?? 2_000);
const mode = process.env.BENCH_MODE ?? 'load';
const mixedConnections = Number(process.env.BENCH_MIXED_CONNECTIONS ?? 200);
const mixedSeconds = Number(process.env.BENCH_MIXED_SECONDS ?? 60);
const jobRecords = Number(process.env.BENCH_JOB_RECORDS ?? 5_000);
const reuseDir = process.env.BENCH_REUSE;
const ARTICLE_SIZE = 2000;
const ARTICLES_PER_BATCH = 250;
/**
 * What the query path's hybrid retrieval asks the keyword search for: DEFAULT_TOP_K (5) sources
 * of CHUNKS_PER_SOURCE (3) chunks (answer-query.ts), five candidates each (retrieve.service.ts).
 */
const KEYWORD_CANDIDATES = 75;


const kept = reuseDir ? (JSON.parse(await readFile(join(reuseDir, KEPT_FILE), 'utf8')) as Kept) : undefined;
const database: BenchDatabase = kept ? { env: kept.env, drop: async () => undefined } : await benchDatabase(process.env.DATABASE_URL);
if (!kept) {
  await mkdir(modelsDir, { recursive: true });
  // The server's builtin-fast reads its table from DATA_DIR/models: share one across runs.
  await symlink(modelsDir, join(database.env.DATA_DIR!, 'models'));
}
if (database.env.DATABASE_URL && !kept) {
  // Index builds only: the HNSW graph of 100,000 vectors does not fit the default 64 MB, and a
  // build that spills is several times slower. No query reads this setting.
  const admin = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`ALTER DATABASE ${new URL(database.env.DATABASE_URL).pathname.slice(1)} SET maintenance_work_mem = '1GB'`);
  await admin.end();
}
const serverEnv = (provider: string) =>
  benchEnv(database, {
    EMBEDDINGS_PROVIDER: provider,
    INGESTION_WORKERS: '0',
    // At the end of each timed load autocannon drops its connections, and every query then in
    // flight logs an error; failures are counted in the figures (non2xx, errors) instead.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'fatal',
    // Every request of the load comes from 127.0.0.1 into one workspace: the default budgets
    // (60 per minute per IP) would answer 429 after the first second.
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
    RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
  });

/** Writes articles until `chunkTarget` chunks: the statements of the ingestion's writeRecord, in batches, then the HNSW index. */
async function buildKnowledgeBase(db: Db, base: string, token: string, workspaceId: string): Promise<Built> {
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'help center' });
  const experience = await call(base, 'POST', '/api/v2/experiences', token, {
    name: 'help widget',
    knowledgeBaseIds: [knowledgeBase.id],
    requireAuth: false,
  });
  const embedder = new BuiltinFastEmbeddingProvider({ modelsDir: join(database.env.DATA_DIR!, 'models'), threads: availableParallelism() });
  const timing = { embedTable: 0, chunkAndEmbed: 0, write: 0, index: 0, vacuumAnalyze: 0 };
  let started = performance.now();
  await embedder.warmUp();
  timing.embedTable = performance.now() - started;
  const { rows: sources } = await db.query<{ id: string }>(
    `INSERT INTO data_sources (workspace_id, knowledge_base_id, adapter) VALUES ($1, $2, 'generic-json') RETURNING id`,
    [workspaceId, knowledgeBase.id],
  );
  const sourceId = sources[0]!.id;
  let chunks = 0;
  let articles = 0;
  while (chunks < chunkTarget) {
    started = performance.now();
    const batch = [];
    for (let index = 0; index < ARTICLES_PER_BATCH && chunks < chunkTarget; index += 1) {
      articles += 1;
      const { title, content } = article(articles, ARTICLE_SIZE);
      const record = { id: `article-${articles}`, title, content, contentType: 'markdown' as const, url: `https://help.example.com/articles/${articles}`, tags: ['help'], metadata: {}, deleted: false };
      const pieces = chunkContent(content, 'markdown', DEFAULT_CHUNK_OPTIONS);
      chunks += pieces.length;
      batch.push({ record, pieces, texts: pieces.map((piece) => embeddingText(record, piece)) });
    }
    const vectors = await embedder.embed(batch.flatMap((item) => item.texts));
    timing.chunkAndEmbed += performance.now() - started;
    started = performance.now();
    const { rows: entries } = await db.query<{ id: string; record_id: string }>(
      `INSERT INTO entries (workspace_id, knowledge_base_id, source_id, record_id, title, content, content_type, url,
         tags, metadata, content_hash, chunk_count, job_created_at)
       SELECT $1, $2, $3, e.record_id, e.title, e.content, 'markdown', e.url, ARRAY['help'], '{}'::jsonb, e.content_hash, e.chunk_count, now()
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[]) AS e(record_id, title, content, url, content_hash, chunk_count)
       RETURNING id, record_id`,
      [
        workspaceId,
        knowledgeBase.id,
        sourceId,
        batch.map((item) => item.record.id),
        batch.map((item) => item.record.title),
        batch.map((item) => item.record.content),
        batch.map((item) => item.record.url),
        batch.map((item) => contentHash(item.record)),
        batch.map((item) => item.pieces.length),
      ],
    );
    const entryIds = new Map(entries.map((row) => [row.record_id, row.id]));
    const rows = batch.flatMap((item) => item.pieces.map((piece, index) => ({ item, piece, text: item.texts[index]! })));
    let vectorIndex = 0;
    await db.query(
      `INSERT INTO chunks (workspace_id, knowledge_base_id, entry_id, ordinal, text, heading_path, start_offset, end_offset,
         text_hash, embedding, embedding_dimension, search_vector)
       SELECT $1, $2, c.entry_id, c.ordinal, c.text, string_to_array(c.headings, chr(31)), c.start_offset, c.end_offset,
         c.text_hash, c.vector::vector, vector_dims(c.vector::vector),
         setweight(to_tsvector('english', c.title || ' ' || replace(c.headings, chr(31), ' ')), 'A') || to_tsvector('english', c.text)
       FROM unnest($3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::int[], $10::text[], $11::text[])
         AS c(entry_id, title, ordinal, text, headings, start_offset, end_offset, text_hash, vector)`,
      [
        workspaceId,
        knowledgeBase.id,
        rows.map((row) => entryIds.get(row.item.record.id)),
        rows.map((row) => row.item.record.title),
        rows.map((row) => row.piece.ordinal),
        rows.map((row) => row.piece.text),
        rows.map((row) => row.piece.headingPath.join('\u001f')),
        rows.map((row) => row.piece.start),
        rows.map((row) => row.piece.end),
        rows.map((row) => sha256(row.text)),
        rows.map(() => `[${Array.prototype.join.call(vectors[vectorIndex++]!, ',')}]`),
      ],
    );
    timing.write += performance.now() - started;
  }
  await embedder.close();
  started = performance.now();
  // PGlite is one session: the setting reaches the index build (PostgreSQL got it per database above).
  if (db.engine === 'pglite') await db.exec("SET maintenance_work_mem = '512MB'");
  await ensureVectorIndex(db, embedder.dimension);
  timing.index = performance.now() - started;
  started = performance.now();
  // VACUUM sets the visibility map, without which the keyword search's index-only scan of
  // keyword_postings fetches every posting's heap row too. On PostgreSQL autovacuum does this
  // after bulk inserts (autovacuum_vacuum_insert_threshold), so it is the steady state;
  // PGlite runs no autovacuum, so there BENCH_VACUUM=0 is what lore gets today.
  await db.exec(vacuum ? 'VACUUM ANALYZE' : 'ANALYZE');
  timing.vacuumAnalyze = performance.now() - started;
  const seconds = Object.fromEntries(Object.entries(timing).map(([stage, ms]) => [stage, round(ms / 1000)]));
  return { workspaceId, token, knowledgeBaseId: knowledgeBase.id, experienceId: experience.id, articles, chunks, seconds };
}

/** What one statement of the query path is, by its text (the pipeline's own SQL, see the modules named). */
function statementKind(sql: string): string {
  // The chunk fetch first: it also computes each chunk's cosine (<=>) and keyword coverage.
  if (sql.includes('FROM chunks c JOIN entries e')) return 'chunkFetch';
  if (sql.includes('<=>')) return 'vectorSearch';
  if (/keyword_(postings|top_k)|tsquery/.test(sql)) return 'keywordSearch';
  if (sql.includes('embedding_dimension FROM knowledge_bases')) return 'knowledgeBaseDimension';
  if (sql.includes('INSERT INTO sessions')) return 'sessionInsert';
  if (sql.includes('INSERT INTO queries')) return 'queryInsert';
  if (sql.includes('FROM experiences e JOIN workspaces')) return 'experienceWorkspace';
  if (sql.includes('FROM experiences')) return 'experience';
  return `other: ${sql.replace(/\s+/g, ' ').slice(0, 60)}`;
}

/**
 * Times every statement, transaction, embedding call and generator of `context` while `work`
 * runs, then restores them: milliseconds per kind, summed. A transaction counts as the kind of
 * its most telling statement (the vector search's transaction also sets hnsw options).
 */
async function timed(context: AppContext, work: () => Promise<void>): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  const add = (kind: string, ms: number) => (totals[kind] = (totals[kind] ?? 0) + ms);
  const { db, embedder } = context;
  const original = { query: db.query, transaction: db.transaction, searchVectors: db.searchVectors, embed: embedder.embed, generators: context.generators };
  const searchVectors = original.searchVectors;
  const writable = db as { searchVectors?: Db['searchVectors'] };
  // PGlite's own vector index (pglite-vectors.ts): no SQL for the vector search.
  if (searchVectors) {
    writable.searchVectors = async (request) => {
      const started = performance.now();
      try {
        return await searchVectors(request);
      } finally {
        add('vectorSearch (own index)', performance.now() - started);
      }
    };
  }
  db.query = async function (this: Db, text: string, values?: readonly unknown[]) {
    const started = performance.now();
    try {
      return await original.query.call(this, text, values);
    } finally {
      add(`sql.${statementKind(text)}`, performance.now() - started);
    }
  } as Db['query'];
  db.transaction = async function <T>(this: Db, work: (tx: Queryable) => Promise<T>): Promise<T> {
    const kinds: string[] = [];
    const started = performance.now();
    try {
      return await original.transaction.call<Db, [(tx: Queryable) => Promise<T>], Promise<T>>(this, (tx: Queryable) =>
        work({ exec: (text) => tx.exec(text), query: (text, values) => (kinds.push(statementKind(text)), tx.query(text, values)) } as Queryable),
      );
    } finally {
      const kind = kinds.find((name) => name === 'vectorSearch' || name === 'queryInsert') ?? kinds[0] ?? 'empty';
      add(`sql.${kind}${kind === 'queryInsert' ? '+sessionUpdate' : ''} (transaction)`, performance.now() - started);
    }
  } as Db['transaction'];
  embedder.embed = async function (this: EmbeddingProvider, ...args: Parameters<EmbeddingProvider['embed']>) {
    const started = performance.now();
    try {
      return await original.embed.apply(this, args);
    } finally {
      add('embedQuestion', performance.now() - started);
    }
  };
  (context as { generators: AppContext['generators'] }).generators = (name) => {
    const generator = original.generators(name);
    return {
      name: generator.name,
      model: generator.model,
      async *generate(request) {
        const pieces = generator.generate(request)[Symbol.asyncIterator]();
        for (;;) {
          const started = performance.now();
          const piece = await pieces.next();
          add('generate', performance.now() - started);
          if (piece.done) return;
          yield piece.value;
        }
      },
    } satisfies AnswerGenerator;
  };
  try {
    await work();
  } finally {
    db.query = original.query;
    db.transaction = original.transaction;
    writable.searchVectors = original.searchVectors;
    embedder.embed = original.embed;
    (context as { generators: AppContext['generators'] }).generators = original.generators;
  }
  return totals;
}

/** A load's figures, with the CPU time per answer of this process and the database (see process-cpu.ts), and the load average before and after. */
type Load = LoadFigures & { cpuMsPerAnswer: { api: number; database: number; total: number }; loadAverage: number[] };

function perAnswer(cpu: CpuSpent, answered: number): Load['cpuMsPerAnswer'] {
  const per = (ms: number) => round(ms / Math.max(answered, 1), 2);
  return { api: per(cpu.apiMs), database: per(cpu.databaseMs), total: per(cpu.apiMs + cpu.databaseMs) };
}

/** Counts the requests `server` is answering, so that a load starts only once the previous one's stragglers are done. */
function inFlight(server: HttpServer): () => Promise<void> {
  let open = 0;
  server.on('request', (_request, response: ServerResponse) => {
    open += 1;
    response.once('close', () => (open -= 1));
  });
  return async () => {
    while (open > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  };
}

/** Autocannon runs at once in a child process (see query-load.ts), with the CPU they cost and the load average around them. */
async function loads(specs: LoadSpec[], drained: () => Promise<void>): Promise<{ figures: LoadFigures[]; cpu: CpuSpent; loadAverage: number[] }> {
  await drained();
  const before = loadavg()[0]!;
  const meter = await startCpuMeter(database.env.DATABASE_URL);
  const figures = await runLoads(specs);
  const cpu = await meter.stop();
  return { figures, cpu, loadAverage: [round(before, 2), round(loadavg()[0]!, 2)] };
}

/** One autocannon run (see `loads`). */
async function load(spec: LoadSpec, drained: () => Promise<void>): Promise<Load> {
  const { figures, cpu, loadAverage } = await loads([spec], drained);
  return { ...figures[0]!, cpuMsPerAnswer: perAnswer(cpu, figures[0]!.answered), loadAverage };
}

/** Asks `questions` one at a time; the answers' sources, and the client's latencies. */
async function askSequentially(base: string, experienceId: string, questions: string[]): Promise<{ latencies: number[]; grounded: number; sources: number }> {
  const latencies: number[] = [];
  let grounded = 0;
  let sources = 0;
  for (const text of questions) {
    const started = performance.now();
    const response = await fetch(`${base}/api/v2/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ experienceId, text }) });
    const body = (await response.json()) as { sources?: unknown[] };
    latencies.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`POST /api/v2/query: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    if (body.sources!.length > 0) grounded += 1;
    sources += body.sources!.length;
  }
  return { latencies, grounded, sources };
}

/** The median over `questions` of the chunks holding any of a question's terms: what the keyword search reads and ranks. */
async function keywordMatches(db: Db, built: Built, questions: string[]): Promise<number> {
  const counts: number[] = [];
  for (const text of questions) {
    // From the postings the keyword search reads (chunks.search_vector has no index since migration 014).
    const { rows } = await db.query<{ count: number }>(
      `SELECT count(DISTINCT p.chunk_id)::int AS count FROM (SELECT DISTINCT t.lexeme FROM unnest(keyword_document($1)) t) q
       JOIN keyword_postings p ON p.workspace_id = $2 AND p.knowledge_base_id = $3 AND p.lexeme = q.lexeme`,
      [text, built.workspaceId, built.knowledgeBaseId],
    );
    counts.push(rows[0]!.count);
  }
  return percentile(counts, 0.5);
}

/**
 * The median time of the keyword search alone, one question at a time, as the query path calls it
 * for the candidates it asks for: with this process's posting lists, from the call to its result
 * (statements and scoring in memory). A first pass loads the lists the questions need (its median
 * is `cold`'s: each question waits for the lists it misses, or the database ranks it when they are
 * too long to keep); the second is the figure.
 */
async function keywordSearchP50(context: AppContext, built: Built, questions: string[]) {
  const lists = postingListsOf(context.db);
  const input = { workspaceId: built.workspaceId, knowledgeBaseIds: [built.knowledgeBaseId], topK: KEYWORD_CANDIDATES, mode: 'keyword' as const };
  const pass = async () => {
    const latencies: number[] = [];
    const before = { ...lists.counts };
    for (const query of questions) {
      const started = performance.now();
      await keywordSearch(context.db, { ...input, query }, KEYWORD_CANDIDATES, lists);
      latencies.push(performance.now() - started);
      await lists.settled();
    }
    return { p50Ms: round(percentile(latencies, 0.5), 2), fromMemory: lists.counts.hits - before.hits, fromDatabase: lists.counts.misses - before.misses };
  };
  const cold = await pass();
  const warm = await pass();
  return { keywordP50Ms: warm.p50Ms, keywordSearch: { cold, warm, held: lists.held } };
}

/**
 * The query load `spec` while an ingestion job of BENCH_INGEST_RECORDS articles runs in this
 * process (started, and past its first record, before the load; cancelled after it).
 */
async function queryDuringIngest(server: RunningServer, config: Config, built: Built, spec: LoadSpec, drained: () => Promise<void>) {
  const bulk = await startBulkJob(server, config, built.token, { records: ingestRecords, recordSize: ARTICLE_SIZE });
  const progress = async () => (await call(server.url, 'GET', `/api/v2/data-ingestion/jobs/${bulk.jobId}`, built.token)).data.progress.processed as number;
  try {
    await waitForJob(server.url, built.token, bulk.jobId, (job) => job.data.progress.processed > 0 || finished(job));
    const before = await progress();
    const query = await load(spec, drained);
    const after = await progress();
    return { query, recordsIngestedDuringLoad: after - before, jobFinishedDuringLoad: after === ingestRecords };
  } finally {
    // A job that finished answers 409, which is fine.
    await call(server.url, 'DELETE', `/api/v2/data-ingestion/jobs/${bulk.jobId}`, built.token).catch(() => undefined);
    await bulk.stop();
  }
}

/** A finished job of BENCH_JOB_RECORDS one-chunk articles, whose GET the mixed load reads: the kept one, or a new one. */
async function jobToRead(server: RunningServer, config: Config, built: Built, keptJobId: string | undefined): Promise<string> {
  if (keptJobId) return keptJobId;
  const bulk = await startBulkJob(server, config, built.token, { records: jobRecords, recordSize: 300 });
  try {
    const job = await waitForJob(server.url, built.token, bulk.jobId, finished);
    if (job.status !== 'completed') throw new Error(`the job to read ended ${job.status}: ${JSON.stringify(job.result)}`);
    return bulk.jobId;
  } finally {
    await bulk.stop();
  }
}

/**
 * Issue 10's mixed load: half of BENCH_MIXED_CONNECTIONS ask questions, half read the job `jobId`,
 * for BENCH_MIXED_SECONDS. Reads of a 5,000-record job once starved the queries (on PostgreSQL at
 * 200 connections: 40 answered and 560 timed out in 60 s).
 */
async function mixedLoad(server: RunningServer, built: Built, jobId: string, drained: () => Promise<void>) {
  const jobConnections = Math.floor(mixedConnections / 2);
  const base = server.url;
  const { figures, cpu, loadAverage } = await loads(
    [
      {
        url: `${base}/api/v2/query`,
        method: 'POST',
        connections: mixedConnections - jobConnections,
        seconds: mixedSeconds,
        body: { articles: built.articles, seed: 1, count: 40_000, skip: 0, experienceId: built.experienceId },
      },
      {
        url: `${base}/api/v2/data-ingestion/jobs/${jobId}`,
        method: 'GET',
        connections: jobConnections,
        seconds: mixedSeconds,
        headers: { authorization: `Bearer ${built.token}` },
      },
    ],
    drained,
  );
  const [query, jobGet] = figures as [LoadFigures, LoadFigures];
  const jobBytes = Buffer.byteLength(await fetch(`${base}/api/v2/data-ingestion/jobs/${jobId}`, { headers: { authorization: `Bearer ${built.token}` } }).then((response) => response.text()));
  return {
    connections: { query: mixedConnections - jobConnections, jobGet: jobConnections },
    seconds: mixedSeconds,
    jobRecords,
    jobBytes,
    query,
    jobGet,
    cpuMsSpent: { api: round(cpu.apiMs), database: round(cpu.databaseMs) },
    loadAverage,
  };
}

const ratio = (a: number, b: number) => round(a / b, 2);

/**
 * The PostgreSQL server's memory settings, printed with its figures: on this machine huge pages
 * halved the database's CPU per question (bench/history.md, "PostgreSQL's shared memory in huge
 * pages"). `hugePages` is the setting; with `try`, PostgreSQL 15 does not say whether it got them.
 */
async function serverMemory(db: Db) {
  if (db.engine !== 'postgres') return undefined;
  const { rows } = await db.query<{ shared_buffers: string; huge_pages: string; huge_pages_needed: string | null }>(
    "SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('huge_pages') AS huge_pages, current_setting('shared_memory_size_in_huge_pages', true) AS huge_pages_needed",
  );
  const [row] = rows;
  return row && { sharedBuffers: row.shared_buffers, hugePages: row.huge_pages, hugePagesNeeded: row.huge_pages_needed === null ? null : Number(row.huge_pages_needed) };
}

let built = kept?.built;
let keptJobId = kept?.jobId;
try {
  for (const provider of providers) {
    const { config, server } = await startBenchServer(serverEnv(provider));
    const embedOnly = Fastify();
    try {
      const base = server.url;
      const { context } = server;
      if (!built) {
        const { workspaceId, token } = await benchTenant(base, 'bench');
        built = await buildKnowledgeBase(context.db, base, token, workspaceId);
      }
      const { embedder } = context;
      // The stored vectors are builtin-fast's; the label says which provider they are compared with (see the top of this file).
      await context.db.query('UPDATE knowledge_bases SET embedding_provider = $2, embedding_model = $3, embedding_dimension = $4 WHERE id = $1', [
        built.knowledgeBaseId,
        embedder.name,
        embedder.model,
        embedder.dimension,
      ]);
      await (embedder instanceof BuiltinEmbeddingProvider ? embedder.warmUp() : embedder.embed(['warm up']));

      // The denominator: the same provider instance, behind the smallest Fastify route that parses the same JSON body.
      embedOnly.post<{ Body: { text: string } }>('/embed', async (request) => {
        const [vector] = await embedder.embed([request.body.text]);
        return { dimension: vector!.length };
      });
      const embedUrl = await embedOnly.listen({ port: 0, host: '127.0.0.1' });
      const drained = [inFlight(server.app.server), inFlight(embedOnly.server)];
      const idle = async () => {
        for (const wait of drained) await wait();
      };
      const summary = { engine: context.db.engine, server: await serverMemory(context.db), embedder: `${embedder.name}/${embedder.model}`, chunks: built.chunks };
      if (mode === 'mixed') {
        keptJobId = await jobToRead(server, config, built, keptJobId);
        console.log(JSON.stringify({ mode, ...summary, ...(await mixedLoad(server, built, keptJobId, idle)) }));
        continue;
      }

      const questions = { articles: built.articles, seed: 1, count: 40_000 };
      const profileSet = helpQuestions(profileQueries, built.articles, 2);
      // Warm-up (JIT, connection pool, index pages in cache), not measured. On PGlite the first
      // question starts the vector graph's build, and questions scan until it is built: waited for.
      await askSequentially(base, built.experienceId, profileSet.slice(0, 20));
      await context.db.vectorGraphs?.({ settled: true });
      let sequential = { latencies: [] as number[], grounded: 0, sources: 0 };
      const stages = await timed(context, async () => {
        sequential = await askSequentially(base, built!.experienceId, profileSet);
      });
      const { keywordP50Ms, keywordSearch: keywordPasses } = await keywordSearchP50(context, built, profileSet.slice(0, 100));
      const byConnections: Record<string, { query: Load; healthz: Load; embed: Load }> = {};
      for (const [index, connections] of connectionCounts.entries()) {
        const run = { connections, seconds };
        const healthz = await load({ ...run, url: `${base}/healthz`, method: 'GET' }, idle);
        const embed = await load({ ...run, url: `${embedUrl}/embed`, method: 'POST', body: { ...questions, skip: 0 } }, idle);
        const profiler = cpuProfileDir && index === 0 ? new Session() : undefined;
        if (profiler) {
          profiler.connect();
          await profiler.post('Profiler.enable');
          await profiler.post('Profiler.start');
        }
        const query = await load({ ...run, url: `${base}/api/v2/query`, method: 'POST', body: { ...questions, experienceId: built.experienceId, skip: index * 20_000 } }, idle);
        if (profiler) {
          const { profile } = await profiler.post('Profiler.stop');
          await mkdir(cpuProfileDir!, { recursive: true });
          await writeFile(join(cpuProfileDir!, `query-${context.db.engine}-${embedder.name}-${connections}.cpuprofile`), JSON.stringify(profile));
          profiler.disconnect();
        }
        byConnections[connections] = { query, healthz, embed };
      }
      const firstQuery = { url: `${base}/api/v2/query`, method: 'POST' as const, connections: connectionCounts[0]!, seconds, body: { ...questions, experienceId: built.experienceId, skip: connectionCounts.length * 20_000 } };
      const duringIngest = ingestRecords > 0 ? await queryDuringIngest(server, config, built, firstQuery, idle) : undefined;
      await idle();
      const ratios = Object.fromEntries(
        Object.entries(byConnections).map(([connections, { query, healthz, embed }]) => [
          connections,
          {
            queryOverHealthzP50: ratio(query.latencyMs.p50, healthz.latencyMs.p50),
            queryOverEmbedP50: ratio(query.latencyMs.p50, embed.latencyMs.p50),
            embedOverQueryRequestsPerSecond: ratio(embed.requestsPerSecond, query.requestsPerSecond),
            // Retrieval + generation (+ session and query writes) against the question's embedding,
            // in server time per request at saturation: (1/q - 1/e) / (1/e - 1/h). Target: at most 1.
            retrievalAndGenerationOverEmbedding: ratio(
              1 / query.requestsPerSecond - 1 / embed.requestsPerSecond,
              1 / embed.requestsPerSecond - 1 / healthz.requestsPerSecond,
            ),
          },
        ]),
      );
      const count = sequential.latencies.length;
      const perConnections = <T>(pick: (load: { query: Load; healthz: Load; embed: Load }, connections: string) => T) =>
        Object.fromEntries(Object.entries(byConnections).map(([connections, load]) => [connections, pick(load, connections)]));
      const saturated = byConnections[connectionCounts.at(-1)!]!;
      console.log(
        JSON.stringify({
          ...summary,
          keywordP50Ms,
          keywordSearch: keywordPasses,
          // At the last connection count: API process and database CPU per query answered.
          cpuMsPerQuery: saturated.query.cpuMsPerAnswer.total,
          queryRps: perConnections(({ query }) => query.requestsPerSecond),
          embedRps: perConnections(({ embed }) => embed.requestsPerSecond),
          ratio: perConnections((_load, connections) => ratios[connections]!.retrievalAndGenerationOverEmbedding),
          queryP99IdleMs: byConnections[connectionCounts[0]!]!.query.latencyMs.p99,
          queryP99DuringIngestMs: duringIngest?.query.latencyMs.p99,
          chunkVectors: 'builtin-fast/universal-sentence-encoder-lite-static',
          generator: config.llmProvider,
          vacuumed: vacuum,
          articles: built.articles,
          buildSeconds: built.seconds,
          seconds,
          loads: byConnections,
          ratios,
          duringIngest: duringIngest && { ...duringIngest, records: ingestRecords, connections: connectionCounts[0] },
          sequential: {
            queries: count,
            latencyMs: { p50: round(percentile(sequential.latencies, 0.5), 2), p95: round(percentile(sequential.latencies, 0.95), 2) },
            groundedShare: round(sequential.grounded / count, 2),
            sourcesPerAnswer: round(sequential.sources / count, 2),
            keywordMatchesP50: await keywordMatches(context.db, built, profileSet.slice(0, 50)),
            // Mean milliseconds per query; the vector and keyword searches run concurrently, so their sum exceeds their wall time.
            stageMsPerQuery: Object.fromEntries(Object.entries(stages).map(([stage, ms]) => [stage, round(ms / count, 2)])),
          },
          loadAverage: loadavg().map((value) => round(value, 2)),
        }),
      );
    } finally {
      await embedOnly.close();
      await server.close();
    }
  }
} finally {
  if (process.env.BENCH_KEEP === '1' || kept) {
    if (built) await writeFile(join(database.env.DATA_DIR!, KEPT_FILE), JSON.stringify({ env: database.env, built, jobId: keptJobId } satisfies Kept));
    console.error(`kept: ${JSON.stringify(database.env)}; BENCH_REUSE=${database.env.DATA_DIR} runs on it again`);
  } else await database.drop();
}
