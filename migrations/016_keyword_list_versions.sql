-- What a question ranked from the posting lists in memory reads first (keyword-search.ts,
-- `rankFromMemory`): for each knowledge base searched and each lexeme of the question that has
-- postings there, its postings and version (migration 013), its df and idf over the knowledge bases,
-- their average chunk length, and the idf of the whole question (lexemes without postings included).
--
-- It was a prepared statement, which PostgreSQL planned again at every call: with the knowledge
-- bases and the question known, the planner counts their rows exactly, so the generic plan (ten
-- of each assumed) always looked dearer than a custom one, and planning cost twice the
-- execution (0.33 ms against 0.16, EXPLAIN ANALYZE on 100,002 chunks). Here the plan is generic
-- and kept by the session; the lexemes are read through a LATERAL aggregate, which the planner
-- cannot turn into a join, so that even that plan probes the primary key once per knowledge base
-- and lexeme (a join plan read all 23,057 rows of keyword_lexemes: 2.5 ms). Database CPU per call,
-- one at a time: 0.12-0.14 ms against 0.49-0.51 (bench/history.md, "Posting-list versions planned
-- once").
CREATE FUNCTION keyword_list_versions(searched_workspace uuid, searched_bases uuid[], question_text text)
RETURNS TABLE (knowledge_base_id uuid, lexeme text, postings float8, version text, df float8, idf float8, average_length float8, whole_idf float8)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH totals AS (
    SELECT greatest(sum(k.chunks), 1)::float8 AS chunks, greatest(sum(k.tokens), 1)::float8 / greatest(sum(k.chunks), 1) AS average_length
    FROM keyword_totals k WHERE k.workspace_id = searched_workspace AND k.knowledge_base_id = ANY(searched_bases)
  ),
  question AS (SELECT DISTINCT q.lexeme FROM unnest(keyword_document(question_text)) q),
  lists AS (
    SELECT b.id AS base_id, q.lexeme, s.postings, s.version
    FROM unnest(searched_bases) b(id)
    CROSS JOIN question q
    CROSS JOIN LATERAL (
      SELECT sum(l.chunks)::float8 AS postings, sum(l.changes)::text AS version FROM keyword_lexemes l
      WHERE l.workspace_id = searched_workspace AND l.knowledge_base_id = b.id AND l.lexeme = q.lexeme
    ) s
    WHERE s.postings > 0
  ),
  terms AS (SELECT l.lexeme, sum(l.postings) AS df FROM lists l GROUP BY l.lexeme)
  SELECT l.base_id, l.lexeme, l.postings, l.version, t.df,
    ln(1 + (totals.chunks - t.df + 0.5) / (t.df + 0.5)), totals.average_length,
    (SELECT sum(ln(1 + (totals.chunks - coalesce(w.df, 0) + 0.5) / (coalesce(w.df, 0) + 0.5)))
     FROM question q LEFT JOIN terms w ON w.lexeme = q.lexeme)
  FROM lists l JOIN terms t ON t.lexeme = l.lexeme CROSS JOIN totals;
END
$$;
