-- keyword_top_k (migration 007) completes its candidates one lexeme at a time, most weighty first,
-- dropping after each lexeme the candidates that can no longer reach the top k. Migration 007
-- looked up every remaining lexeme for every candidate: on the 100,000-chunk help centre of
-- bench:query, a 5-lexeme question kept 2,045 candidates and made 6,135 lookups, most of which
-- found nothing. The ranking is unchanged (see docs/keyword-engine.md).
--
-- The top k chunks of the knowledge bases by BM25 for a question, exactly as summing every posting
-- of its lexemes would rank them (scores rounded to 9 decimals, ties by chunk id), with the
-- document frequency of each lexeme that has postings.
--
-- MaxScore: the lexemes are taken rarest first. The postings of the first few (R) are summed per
-- chunk; those partial sums are lower bounds of the chunks' scores, so θ, the k-th largest, is at
-- most the k-th best score. A chunk holding none of R scores at most the sum of the others' upper
-- bounds (idf × max impact × max(1, average length / reference length)); once that sum is below θ
-- no such chunk can enter the top k, and of the chunks seen only those whose partial sum plus that
-- bound reaches θ can: they are the candidates. R starts as the fewest rarest lexemes whose bounds
-- outweigh the others'. Otherwise R grows until its postings at least double (so the work stays
-- within twice that of the last try) or holds every lexeme, which is the exhaustive sum.
--
-- The candidates then get the other lexemes' weights one lexeme at a time, largest bound first,
-- from the postings' primary key. After each, θ is again the k-th largest of their (higher) lower
-- bounds, and a candidate whose lower bound plus the bounds of the lexemes still to come is below
-- θ is dropped: it cannot reach a score that k candidates already have.
CREATE OR REPLACE FUNCTION keyword_top_k(p_workspace uuid, p_knowledge_bases uuid[], p_query text, p_k integer)
RETURNS TABLE (chunk_id uuid, score float8, document_frequencies jsonb)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  total_chunks float8;
  average_length float8;
  lexemes text[];
  idfs float8[];
  bounds float8[];
  frequencies jsonb;
  postings_read float8[];
  lexeme_count integer;
  split integer := 1;
  rest float8;
  theta float8;
  candidate_ids uuid[];
  candidate_bases uuid[];
  candidate_scores float8[];
  step integer;
BEGIN
  SELECT greatest(sum(t.chunks), 1)::float8, greatest(sum(t.tokens), 1)::float8 / greatest(sum(t.chunks), 1)
  INTO total_chunks, average_length
  FROM keyword_totals t WHERE t.workspace_id = p_workspace AND t.knowledge_base_id = ANY(p_knowledge_bases);

  SELECT array_agg(s.lexeme ORDER BY s.df, s.lexeme),
    array_agg(ln(1 + (total_chunks - s.df + 0.5) / (s.df + 0.5)) ORDER BY s.df, s.lexeme),
    -- The bound is raised by a millionth so that rounding can never make it too low.
    array_agg(ln(1 + (total_chunks - s.df + 0.5) / (s.df + 0.5)) * s.max_impact
      * greatest(1, average_length / keyword_reference_length()) * 1.000001 ORDER BY s.df, s.lexeme),
    array_agg(s.cumulative ORDER BY s.df, s.lexeme),
    jsonb_object_agg(s.lexeme, s.df)
  INTO lexemes, idfs, bounds, postings_read, frequencies
  FROM (
    SELECT l.lexeme, l.df, l.max_impact, sum(l.df) OVER (ORDER BY l.df, l.lexeme) AS cumulative
    FROM (
      SELECT l.lexeme, sum(l.chunks)::float8 AS df, max(l.max_impact) AS max_impact
      FROM unnest(p_knowledge_bases) b(id)
      CROSS JOIN (SELECT DISTINCT q.lexeme FROM unnest(keyword_document(p_query)) q) q
      JOIN keyword_lexemes l ON l.workspace_id = p_workspace AND l.knowledge_base_id = b.id AND l.lexeme = q.lexeme
      GROUP BY l.lexeme
      HAVING sum(l.chunks) > 0
    ) l
  ) s;
  lexeme_count := coalesce(array_length(lexemes, 1), 0);
  IF lexeme_count = 0 THEN
    RETURN;
  END IF;
  -- A try can only succeed once R's lexemes hold k chunks (θ is 0 below) and their bounds sum above
  -- the others' (θ is at most what R can add up to): the first try is the first such R. On SciFact
  -- this skipped 3-5 of the 5-8 tries a question took with k = 50.
  SELECT coalesce(min(i), lexeme_count) INTO split
  FROM generate_subscripts(bounds, 1) i
  WHERE postings_read[i] >= p_k
    AND (SELECT sum(b) FROM unnest(bounds[1:i]) b) > (SELECT coalesce(sum(b), 0) FROM unnest(bounds[i + 1:lexeme_count]) b);

  LOOP
    SELECT coalesce(sum(b), 0) INTO rest FROM unnest(bounds[split + 1:lexeme_count]) b;
    -- Knowledge bases and lexemes both come from arrays joined by equality, so that the only
    -- good plan is a key lookup per pair. With `knowledge_base_id = ANY(...)` a knowledge base
    -- newer than the table's statistics (estimated at one posting) had all its postings scanned:
    -- 110-300 ms for a 5,000-chunk knowledge base among 3.7 million postings, against 2 ms.
    WITH partial AS MATERIALIZED (
      SELECT p.chunk_id, p.knowledge_base_id,
        sum(w.idf * keyword_term_weight(p.frequency, p.chunk_length, average_length)) AS score
      FROM unnest(p_knowledge_bases) b(id)
      CROSS JOIN unnest(lexemes[1:split], idfs[1:split]) w(lexeme, idf)
      JOIN keyword_postings p ON p.workspace_id = p_workspace AND p.knowledge_base_id = b.id AND p.lexeme = w.lexeme
      GROUP BY p.chunk_id, p.knowledge_base_id
    ),
    threshold AS (
      SELECT coalesce((SELECT x.score FROM partial x ORDER BY x.score DESC LIMIT 1 OFFSET p_k - 1), 0) AS theta
    )
    SELECT t.theta, c.ids, c.bases, c.scores INTO theta, candidate_ids, candidate_bases, candidate_scores
    FROM threshold t
    CROSS JOIN LATERAL (
      SELECT array_agg(x.chunk_id) AS ids, array_agg(x.knowledge_base_id) AS bases, array_agg(x.score) AS scores
      FROM partial x WHERE x.score + rest >= t.theta * 0.999999
    ) c;
    EXIT WHEN split = lexeme_count OR rest < theta;
    -- The next try reads at least twice the postings of this one.
    SELECT coalesce(min(i), lexeme_count) INTO split
    FROM generate_subscripts(postings_read, 1) i
    WHERE i > split AND postings_read[i] >= 2 * postings_read[split];
  END LOOP;

  -- The lexemes outside R, largest bound first.
  FOR step IN SELECT i FROM generate_series(split + 1, lexeme_count) i ORDER BY bounds[i] DESC, i LOOP
    rest := rest - bounds[step];
    WITH completed AS MATERIALIZED (
      SELECT c.chunk_id, c.knowledge_base_id, c.score + coalesce((
          SELECT idfs[step] * keyword_term_weight(p.frequency, p.chunk_length, average_length)
          FROM keyword_postings p
          WHERE p.workspace_id = p_workspace AND p.knowledge_base_id = c.knowledge_base_id AND p.lexeme = lexemes[step]
            AND p.chunk_id = c.chunk_id
        ), 0) AS score
      FROM unnest(candidate_ids, candidate_bases, candidate_scores) c(chunk_id, knowledge_base_id, score)
    ),
    threshold AS (
      SELECT greatest(theta, coalesce((SELECT x.score FROM completed x ORDER BY x.score DESC LIMIT 1 OFFSET p_k - 1), 0)) AS theta
    )
    SELECT t.theta, c.ids, c.bases, c.scores INTO theta, candidate_ids, candidate_bases, candidate_scores
    FROM threshold t
    CROSS JOIN LATERAL (
      SELECT array_agg(x.chunk_id) AS ids, array_agg(x.knowledge_base_id) AS bases, array_agg(x.score) AS scores
      FROM completed x WHERE x.score + greatest(rest, 0) >= t.theta * 0.999999
    ) c;
  END LOOP;

  RETURN QUERY
  SELECT c.chunk_id, round(c.score::numeric, 9)::float8, frequencies
  FROM unnest(candidate_ids, candidate_scores) c(chunk_id, score)
  ORDER BY 2 DESC, 1
  LIMIT p_k;
END
$$;
