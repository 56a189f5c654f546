import type { RetrieveInput } from '../retrieve-input.ts';

// The keyword coverage of the chunks a retrieval returns: the share of the question's idf that a
// chunk's lexemes hold, 0 to 1, which grounding compares with a threshold (docs/query.md). The
// statement that fetches the returned chunks (retrieve.service.ts) reads it with these, unless
// the ranking came from the posting lists in memory, which give it (`PostingLists.idfSums`).

/**
 * The CTEs the keyword coverage (`COVERAGE`) of the chunks returned reads: the question's lexemes
 * and their idf over the knowledge bases searched. Adds the question, the knowledge bases and, when
 * the keyword search read them already, the document frequencies to `values`.
 */
export function coverageTerms(values: unknown[], input: RetrieveInput, documentFrequencies: Record<string, number> | undefined): string {
  const query = values.push(input.query);
  const bases = values.push(input.knowledgeBaseIds);
  // Only a vector search (or a filter that left no keyword hit) leaves the document frequencies to
  // read here, from the per-lexeme counts the chunk triggers keep (migration 007: at most 16 rows
  // per lexeme, not one per posting).
  const documentFrequency = documentFrequencies
    ? `SELECT coalesce(($${values.push(JSON.stringify(documentFrequencies))}::jsonb ->> terms.lexeme)::float8, 0) AS df`
    : `SELECT coalesce(sum(l.chunks), 0)::float8 AS df FROM unnest($${bases}::uuid[]) b(id)
         JOIN keyword_lexemes l ON l.workspace_id = $1 AND l.knowledge_base_id = b.id AND l.lexeme = terms.lexeme`;
  return `WITH terms AS (SELECT DISTINCT t.lexeme FROM unnest(keyword_document($${query})) t),
     totals AS (
       SELECT greatest(sum(chunks), 1)::float8 AS chunks FROM keyword_totals WHERE workspace_id = $1 AND knowledge_base_id = ANY($${bases}::uuid[])
     ),
     weights AS (
       SELECT terms.lexeme, ln(1 + (totals.chunks - d.df + 0.5) / (d.df + 0.5)) AS idf
       FROM terms CROSS JOIN totals CROSS JOIN LATERAL (${documentFrequency}) d
     )`;
}

/** The share of the question's idf that chunk `c` holds, over the CTEs of `coverageTerms`. */
export const COVERAGE = `(SELECT sum(w.idf) FROM weights w JOIN keyword_postings p
          ON p.workspace_id = $1 AND p.knowledge_base_id = c.knowledge_base_id AND p.lexeme = w.lexeme AND p.chunk_id = c.id)
         / nullif((SELECT sum(idf) FROM weights), 0)`;
