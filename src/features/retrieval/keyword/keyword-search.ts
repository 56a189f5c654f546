import type { Queryable } from '../../../core/db/db.ts';
import type { ListKey, PostingLists } from './posting-lists.ts';
import { filterClause, hasFilter, type Ranked, type RetrieveInput } from '../retrieve-input.ts';

// N and the average chunk length of the knowledge bases searched ($1 the workspace, $2 the
// knowledge bases), as `keyword_top_k` reads them.
const KEYWORD_TOTALS = `SELECT greatest(sum(chunks), 1)::float8 AS chunks, greatest(sum(tokens), 1)::float8 / greatest(sum(chunks), 1) AS average_length
       FROM keyword_totals WHERE workspace_id = $1 AND knowledge_base_id = ANY($2::uuid[])`;

/**
 * A BM25 ranking with the document frequency of each question lexeme that has postings (absent:
 * none), which the relevance of the returned chunks reuses instead of counting them again. When
 * the ranking came from the posting lists in memory, `coverage` gives the keyword coverage of any
 * chunks of the knowledge bases (absent from its map: 0) from those lists, so that the chunks
 * returned need no index probe per chunk and lexeme in the database.
 */
export type KeywordRanking = {
  ranking: Ranked;
  documentFrequencies: Record<string, number> | undefined;
  coverage?: (chunkIds: string[]) => Map<string, number>;
};

type ScoredRow = { id: string; score: number; frequencies: Record<string, number> | null };

function toRanking(rows: ScoredRow[], frequenciesUnknown: boolean): KeywordRanking {
  return {
    ranking: rows.map((row) => ({ id: row.id, score: Number(row.score) })),
    // With no row (no posting at all) every frequency is 0; but a filter may have left none out
    // of many, so then they are unknown.
    documentFrequencies: rows[0]?.frequencies ?? (frequenciesUnknown ? undefined : {}),
  };
}

/**
 * Chunks holding any of the query's terms, ranked by BM25 (Robertson and Zaragoza 2009, with
 * Lucene's idf): per query lexeme, idf = ln(1 + (N - df + 0.5) / (df + 0.5)) over the chunks of
 * the knowledge bases searched, times tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average)).
 * Lexemes are those of `keyword_document` (migration 006), as in the chunks. Three rankers give
 * the same chunks, scores and order (keyword-ranking.test.ts and keyword-pruning.test.ts hold
 * them to it); which one ranks a question (docs/keyword-engine.md, "Which ranker"):
 *
 * 1. A filter: `exhaustiveKeywordSearch`, in SQL, since the bounds MaxScore prunes with know
 *    nothing of which entries a filter admits.
 * 2. Else, with `lists`, `PostingLists.topK` in this process (TypeScript), when it holds every
 *    posting list of the question at the version the database reports, or has read those it
 *    lacked within a bound wait (`PostingLists.find`): the usual path of the API.
 * 3. Else `keyword_top_k` in SQL (`rankInDatabase`): lists too long to keep, read less than a
 *    second ago, not read in time, or no `lists` given (benchmarks and tests asking the database).
 */
export async function keywordSearch(db: Queryable, input: RetrieveInput, limit: number, lists?: PostingLists): Promise<KeywordRanking> {
  if (hasFilter(input.filter)) return exhaustiveKeywordSearch(db, input, limit);
  if (lists) {
    const found = await rankFromMemory(db, input, limit, lists);
    if (found) return found;
  }
  return rankInDatabase(db, input, limit);
}

/**
 * The SQL ranker of an unfiltered question: `keyword_top_k` (migrations 007 and 011, current
 * version 011) finds the top `limit` by MaxScore, reading the postings of the question's common
 * lexemes only for the chunks that can still make the top, one lexeme at a time, dropping after
 * each those that no longer can. Used when the lists in memory cannot rank the question
 * (`keywordSearch`, case 3).
 */
async function rankInDatabase(db: Queryable, input: RetrieveInput, limit: number): Promise<KeywordRanking> {
  const { rows } = await db.query<ScoredRow>(
    'SELECT chunk_id AS id, score, document_frequencies AS frequencies FROM keyword_top_k($1, $2::uuid[], $3, $4)',
    [input.workspaceId, input.knowledgeBaseIds, input.query, limit],
  );
  return toRanking(rows, false);
}

/**
 * The ranking from the lists in memory, or undefined when any list of the question is not held at
 * the database's version, nor read in time. One call of `keyword_list_versions`
 * (migration 016) reads the versions with what `keyword_top_k` reads first: N and the average
 * length, and each lexeme's df and idf.
 */
async function rankFromMemory(db: Queryable, input: RetrieveInput, limit: number, lists: PostingLists): Promise<KeywordRanking | undefined> {
  const { rows } = await db.query<{
    knowledge_base_id: string;
    lexeme: string;
    postings: number;
    version: string;
    df: number;
    idf: number;
    average_length: number;
    whole_idf: number;
  }>('SELECT * FROM keyword_list_versions($1, $2::uuid[], $3)', [input.workspaceId, input.knowledgeBaseIds, input.query], { prepare: true, question: true });
  // No chunk holds a lexeme of the question: every coverage is 0.
  if (rows.length === 0) return { ranking: [], documentFrequencies: {}, coverage: () => new Map() };
  const keys: ListKey[] = rows.map((row) => ({ knowledgeBaseId: row.knowledge_base_id, lexeme: row.lexeme, version: row.version, postings: Number(row.postings) }));
  const found = await lists.find(db, input.workspaceId, keys);
  if (!found) return undefined;
  const weighted = found.map((list, index) => ({ list, idf: Number(rows[index]!.idf) }));
  const wholeIdf = Number(rows[0]!.whole_idf);
  return {
    ranking: lists.topK(weighted, Number(rows[0]!.average_length), limit),
    documentFrequencies: Object.fromEntries(rows.map((row) => [row.lexeme, Number(row.df)])),
    coverage: (chunkIds) => new Map([...lists.idfSums(weighted, chunkIds)].map(([id, sum]) => [id, sum / wholeIdf])),
  };
}

/**
 * The SQL ranker of a filtered question (`keywordSearch`, case 1): the same ranking by summing
 * every posting of the question's lexemes: term frequencies and lengths from `keyword_postings`,
 * N and the average length from `keyword_totals` (migration 004), read from their primary keys
 * alone. Its cost grows with the postings of those lexemes. Scores are rounded to 9 decimals as
 * `keyword_top_k` rounds them, so that both order ties alike (by chunk id). The tests also call it
 * unfiltered, as the reference the pruned rankers must equal.
 */
export async function exhaustiveKeywordSearch(db: Queryable, input: RetrieveInput, limit: number): Promise<KeywordRanking> {
  const filter = filterClause(input.filter, 5);
  const { rows } = await db.query<ScoredRow>(
    `WITH terms AS (SELECT t.lexeme FROM unnest(keyword_document($3)) t),
     totals AS (${KEYWORD_TOTALS}),
     -- A key lookup per knowledge base and lexeme, joined by equality: with \`= ANY\` on both, a
     -- knowledge base newer than the table's statistics had all its postings scanned (migration 011).
     postings AS MATERIALIZED (
       SELECT p.chunk_id, p.lexeme, p.frequency, p.chunk_length
       FROM unnest($2::uuid[]) b(id) CROSS JOIN terms t
       JOIN keyword_postings p ON p.workspace_id = $1 AND p.knowledge_base_id = b.id AND p.lexeme = t.lexeme
     ),
     frequencies AS (SELECT lexeme, count(*) AS df FROM postings GROUP BY lexeme),
     weights AS (
       SELECT d.lexeme, ln(1 + (totals.chunks - d.df + 0.5) / (d.df + 0.5)) AS idf FROM frequencies d, totals
     ),
     scored AS (
       SELECT p.chunk_id AS id, round(sum(w.idf * keyword_term_weight(p.frequency, p.chunk_length, totals.average_length))::numeric, 9)::float8 AS score
       FROM postings p JOIN weights w ON w.lexeme = p.lexeme, totals
       ${filter.sql ? `WHERE p.chunk_id IN (SELECT c.id FROM chunks c WHERE c.workspace_id = $1 ${filter.sql})` : ''}
       GROUP BY p.chunk_id
     )
     SELECT id, score, (SELECT json_object_agg(lexeme, df) FROM frequencies) AS frequencies
     FROM scored ORDER BY score DESC, id LIMIT $4`,
    [input.workspaceId, input.knowledgeBaseIds, input.query, limit, ...filter.values],
  );
  return toRanking(rows, filter.sql !== '');
}
