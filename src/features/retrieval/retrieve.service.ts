import type { Db, Queryable } from '../../core/db/db.ts';
import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import { COVERAGE, coverageTerms } from './keyword/keyword-coverage.ts';
import { keywordSearch, type KeywordRanking } from './keyword/keyword-search.ts';
import { postingListsOf } from './keyword/posting-lists.ts';
import { filterClause, hasFilter, type Ranked, type RetrieveInput } from './retrieve-input.ts';
import { cosineDistance, indexedDistance } from './vector-index.ts';

export type { RetrieveFilter, RetrieveInput, RetrieveMode } from './retrieve-input.ts';

export type RetrievedChunk = {
  chunkId: string;
  entryId: string;
  knowledgeBaseId: string;
  recordId: string;
  title: string;
  url: string | null;
  text: string;
  headingPath: string[];
  ordinal: number;
  /** Offsets of the chunk in its entry's content (neighbouring chunks of a section overlap). */
  start: number;
  end: number;
  /** The page of the document the chunk starts on (PDF files), else null. */
  page?: number | null;
  /** The ranking score of the mode: cosine similarity, BM25, or the fused score (0 to 1). */
  score: number;
  /**
   * Cosine similarity to the question, for every chunk returned when the knowledge bases hold
   * vectors of the provider in use (also for a hybrid candidate found by keywords alone).
   */
  vectorScore: number | null;
  keywordScore: number | null;
  /**
   * The share of the question's keyword weight the chunk holds, 0 to 1: the idf of each question
   * lexeme it contains over the idf of all of them (a lexeme the knowledge bases lack weighs most).
   * Unlike BM25 it does not grow with the question's length, so it can be compared to a threshold.
   */
  keywordCoverage: number;
};

// Hybrid: the share of the keyword score in the fused score, chosen on SciFact's train split.
// With the builtin encoder the vector ranking is far weaker than BM25 there (nDCG@10 0.27 against
// 0.69), so an even fusion falls below keyword alone (reciprocal rank fusion, k = 60: 0.54); 0.8
// gave 0.697, the best of 0.5-0.95. Retuned for builtin-fast (the default since): 0.6, 0.7, 0.8,
// 0.9 gave 0.673, 0.683, 0.685, 0.6875 on train and no difference on bench:answers dev.
const KEYWORD_WEIGHT = 0.8;

/** The question's vector, of the knowledge bases' dimension (bound in binary, see `Queryable`). */
type QueryVector = { dimension: number; vector: Float32Array };

/**
 * Embeds the question, when the knowledge bases hold vectors of the provider in use (undefined
 * otherwise: vectors of another model are not comparable, and an empty knowledge base has none).
 */
async function queryVector(db: Db, input: RetrieveInput, embedder: EmbeddingProvider): Promise<QueryVector | undefined> {
  const dimension = input.vectorDimension === undefined ? await vectorDimension(db, input, embedder) : input.vectorDimension;
  if (!dimension || !Number.isInteger(dimension)) return undefined;
  const vector = input.queryVector ?? (await embedder.embed([input.query], { question: true }))[0]!;
  return { dimension, vector };
}

async function vectorDimension(db: Db, input: RetrieveInput, embedder: EmbeddingProvider): Promise<number | undefined> {
  const { rows } = await db.query<{ embedding_dimension: number }>(
    `SELECT DISTINCT embedding_dimension FROM knowledge_bases
     WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND embedding_provider = $3 AND embedding_model = $4`,
    [input.workspaceId, input.knowledgeBaseIds, embedder.name, embedder.model],
  );
  return rows[0]?.embedding_dimension;
}

/**
 * Nearest chunks by cosine distance through the HNSW index of their dimension. With a WHERE
 * clause, a plain HNSW scan stops after ef_search candidates and returns too few rows (4 of 10
 * measured, recall 0.43); pgvector 0.8's iterative scan keeps searching until LIMIT rows pass the
 * filter, and `relaxed_order` needs the outer re-sort, by the full-precision cosine where the
 * index orders by a rounded one (vector-index.ts).
 */
async function vectorSearch(db: Db, input: RetrieveInput, query: QueryVector | undefined, limit: number): Promise<Ranked> {
  if (!query) return [];
  // PGlite's own index (pglite-vectors.ts) holds no entry fields: a filtered search reads the table.
  if (db.searchVectors && !hasFilter(input.filter)) {
    const { workspaceId, knowledgeBaseIds } = input;
    const matches = await db.searchVectors({ workspaceId, knowledgeBaseIds, dimension: query.dimension, vector: query.vector, limit });
    return matches.map((match) => ({ id: match.id, score: 1 - match.distance }));
  }
  const filter = filterClause(input.filter, 4);
  // The dimension is an integer read from our own table, safe in the casts.
  const distance = cosineDistance(query.dimension, 3);
  const indexed = indexedDistance(query.dimension, 3);
  // The limit is written into the text (an integer of ours): a generic plan of `LIMIT $n` expects
  // a tenth of the chunks and costs 30 times a custom one, so the server would plan every call.
  if (!Number.isInteger(limit)) throw new Error(`A vector search limit must be an integer, not ${limit}.`);
  const nearest = `FROM chunks c
         WHERE c.workspace_id = $1 AND c.knowledge_base_id = ANY($2::uuid[]) AND c.embedding_dimension = ${query.dimension}
         ${filter.sql}
         ORDER BY ${indexed} LIMIT ${limit}`;
  const search = async (target: Queryable) => {
    const { rows } = await target.query<{ id: string; distance: number }>(
      indexed === distance
        ? `SELECT id, distance FROM (SELECT c.id, ${distance} AS distance ${nearest}) nearest ORDER BY distance`
        : `SELECT c.id, ${distance} AS distance FROM (SELECT c.id, c.embedding ${nearest}) c ORDER BY distance`,
      [input.workspaceId, input.knowledgeBaseIds, query.vector, ...filter.values],
      { prepare: true, question: true },
    );
    return rows.map((row) => ({ id: row.id, score: 1 - row.distance }));
  };
  const efSearch = Math.max(40, limit);
  // The connection's own settings suffice: one round trip instead of four (BEGIN, settings, search, COMMIT).
  if (db.vectorSearchDefaults && efSearch <= db.vectorSearchDefaults.efSearch) return search(db);
  return db.transaction(async (tx: Queryable) => {
    await tx.query("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)", [String(efSearch)]);
    return search(tx);
  });
}

/**
 * Fuses weighted rankings into one: a convex combination of each ranking's scores, min-max
 * normalized over its candidates, so that BM25's unbounded scores and cosine similarities meet on
 * one scale (Bruch et al. 2023 found this more accurate than reciprocal rank fusion once the
 * weight is tuned, which it was: see KEYWORD_WEIGHT). An item missing from a ranking gets nothing
 * from it; a ranking whose scores are all equal gives each of its items the full weight.
 */
export function fuse(rankings: { ranking: Ranked; weight: number }[]): Ranked {
  const scores = new Map<string, number>();
  for (const { ranking, weight } of rankings) {
    if (ranking.length === 0) continue;
    const values = ranking.map((item) => item.score);
    const min = Math.min(...values);
    const span = Math.max(...values) - min;
    for (const item of ranking) {
      const normalized = span > 0 ? (item.score - min) / span : 1;
      scores.set(item.id, (scores.get(item.id) ?? 0) + weight * normalized);
    }
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}

/** Ranked chunks of the knowledge bases for a query: keyword, vector, or both fused (hybrid). */
export async function retrieve(db: Db, embedder: EmbeddingProvider, input: RetrieveInput): Promise<RetrievedChunk[]> {
  if (input.knowledgeBaseIds.length === 0) return [];
  const candidates = input.mode === 'hybrid' ? Math.max(input.topK * 5, 50) : input.topK;
  const query = input.mode === 'keyword' ? undefined : await queryVector(db, input, embedder);
  const vectorOnly: KeywordRanking = { ranking: [], documentFrequencies: undefined };
  const [vector, { ranking: keyword, documentFrequencies, coverage }] = await Promise.all([
    vectorSearch(db, input, query, candidates),
    input.mode === 'vector' ? vectorOnly : keywordSearch(db, input, candidates, postingListsOf(db)),
  ]);
  const ranked = (
    input.mode === 'hybrid'
      ? fuse([
          { ranking: keyword, weight: KEYWORD_WEIGHT },
          { ranking: vector, weight: 1 - KEYWORD_WEIGHT },
        ])
      : input.mode === 'vector'
        ? vector
        : keyword
  ).slice(0, input.topK);
  if (ranked.length === 0) return [];
  const keywordScores = new Map(keyword.map((item) => [item.id, item.score]));
  const ids = ranked.map((item) => item.id);
  // The cosine of every chunk returned, read from its stored vector: a hybrid candidate found by
  // keywords alone has one too, so that relevance can be judged alike for every candidate.
  // (Knowledge bases searched together may hold vectors of another dimension: those have none.)
  const cosine = query
    ? `CASE WHEN c.embedding_dimension = ${query.dimension} THEN 1 - (${cosineDistance(query.dimension, 3)}) END`
    : 'NULL::float8';
  const values: unknown[] = [input.workspaceId, ids, ...(query ? [query.vector] : [])];
  const knownCoverage = coverage?.(ids);
  const { rows } = await db.query<{
    id: string;
    entry_id: string;
    knowledge_base_id: string;
    record_id: string;
    title: string;
    url: string | null;
    text: string;
    heading_path: string[];
    ordinal: number;
    start_offset: number;
    end_offset: number;
    page: number | null;
    cosine: number | null;
    coverage: number | null;
  }>(
    `${knownCoverage ? '' : coverageTerms(values, input, documentFrequencies)}
     SELECT c.id, c.entry_id, c.knowledge_base_id, e.record_id, e.title, e.url, c.text, c.heading_path, c.ordinal,
       c.start_offset, c.end_offset, c.page, ${cosine} AS cosine, ${knownCoverage ? 'NULL::float8' : COVERAGE} AS coverage
     FROM chunks c JOIN entries e ON e.id = c.entry_id
     WHERE c.workspace_id = $1 AND e.workspace_id = $1 AND c.id = ANY($2::uuid[])`,
    values,
    { prepare: true, question: true },
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const results = ranked.flatMap((item) => {
    const row = byId.get(item.id);
    if (!row) return [];
    return [
      {
        chunkId: row.id,
        entryId: row.entry_id,
        knowledgeBaseId: row.knowledge_base_id,
        recordId: row.record_id,
        title: row.title,
        url: row.url,
        text: row.text,
        headingPath: row.heading_path,
        ordinal: row.ordinal,
        start: row.start_offset,
        end: row.end_offset,
        page: row.page,
        // A vector search scores by the stored cosine, whichever index found the chunk.
        score: input.mode === 'vector' && row.cosine !== null ? Number(row.cosine) : item.score,
        vectorScore: row.cosine === null ? null : Number(row.cosine),
        keywordScore: keywordScores.get(item.id) ?? null,
        keywordCoverage: knownCoverage ? (knownCoverage.get(row.id) ?? 0) : Number(row.coverage ?? 0),
      },
    ];
  });
  return input.mode === 'vector' ? results.sort((a, b) => b.score - a.score) : results;
}
