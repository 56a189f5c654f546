-- Top-k keyword ranking that does not read every posting of a question's common terms
-- (MaxScore, Turtle and Flood 1995). It needs, per lexeme of a knowledge base, the number of
-- chunks holding it (df, for idf) and an upper bound of its BM25 term weight. Both are kept here by
-- the chunks' triggers, so the query reads them instead of counting postings. See
-- docs/keyword-engine.md for the algorithm and what this costs at write time.

-- BM25's term weight without idf: tf × (k1 + 1) / (tf + k1 × (1 − b + b × length / average)),
-- k1 = 0.9 and b = 0.4 (BM25_K1 and BM25_B in src/features/retrieval/keyword/bm25.ts, whose
-- termWeight repeats this function for the posting lists in memory; keyword-ranking.test.ts
-- compares both with each other and with a computation by hand). Inlined by the planner.
CREATE FUNCTION keyword_term_weight(frequency integer, length integer, average_length float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT frequency * 1.9::float8 / (frequency + 0.9::float8 * (0.6::float8 + 0.4::float8 * length / average_length))
$$;

-- The average chunk length a posting's stored impact assumes. The weight grows with the average
-- length, and at most in proportion to it, so a posting's weight under the actual average A is at
-- most impact × max(1, A / 100): the bound stays valid whatever the average becomes. 100 is above
-- the average measured on SciFact (74 indexed tokens per chunk, 12,995 chunks), so the factor is 1
-- there.
CREATE FUNCTION keyword_reference_length() RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 100::float8 $$;

-- Per lexeme of a knowledge base: chunks holding it, and the largest impact any of them ever had
-- (never lowered when chunks go: still an upper bound, only looser). Rows are split into slots
-- for the same reason keyword_totals has one row per session: a single row per lexeme would be a
-- hot row every concurrent writer of common words waits on until it commits. A transaction writes
-- only the rows of a slot it holds (keyword_slot()), so no two open transactions ever update the
-- same row; a lexeme's df is the sum of its slots. At most 16 rows per lexeme, never compacted.
CREATE TABLE keyword_lexemes (
  knowledge_base_id uuid NOT NULL,
  lexeme text NOT NULL,
  slot smallint NOT NULL,
  workspace_id uuid NOT NULL,
  chunks bigint NOT NULL,
  max_impact float8 NOT NULL,
  PRIMARY KEY (knowledge_base_id, lexeme, slot)
) WITH (fillfactor = 70);
-- No INCLUDE columns and room left in each page: every write updates these rows, and an update
-- that changes no indexed column and finds room on its page is a heap-only tuple (no new index
-- entry). A query reads a few rows per lexeme, so fetching them from the heap costs nothing.

-- The slot of keyword_lexemes this transaction writes: the first of 16 that no other open
-- transaction holds (a transaction-scoped advisory lock), remembered for the rest of the
-- transaction. With 16 writers at once the next one waits for a slot.
CREATE FUNCTION keyword_slot() RETURNS smallint LANGUAGE plpgsql AS $$
DECLARE
  held text := current_setting('lore.keyword_slot', true);
  candidate integer;
BEGIN
  IF held IS NOT NULL AND held <> '' THEN
    RETURN held::smallint;
  END IF;
  FOR candidate IN 0..15 LOOP
    IF pg_try_advisory_xact_lock(1280266053, candidate) THEN
      PERFORM set_config('lore.keyword_slot', candidate::text, true);
      RETURN candidate;
    END IF;
  END LOOP;
  candidate := pg_backend_pid() % 16;
  PERFORM pg_advisory_xact_lock(1280266053, candidate);
  PERFORM set_config('lore.keyword_slot', candidate::text, true);
  RETURN candidate;
END
$$;

CREATE OR REPLACE FUNCTION keyword_index_chunks() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  writer_slot smallint := keyword_slot();
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    WITH postings AS (
      DELETE FROM keyword_postings p
      USING old_chunks c, unnest(c.search_vector) t
      WHERE p.knowledge_base_id = c.knowledge_base_id AND p.lexeme = t.lexeme AND p.chunk_id = c.id
        AND p.workspace_id = c.workspace_id
      RETURNING p.knowledge_base_id, p.workspace_id, p.lexeme
    )
    INSERT INTO keyword_lexemes AS s (knowledge_base_id, lexeme, slot, workspace_id, chunks, max_impact)
    SELECT p.knowledge_base_id, p.lexeme, writer_slot, p.workspace_id, -count(*), 0
    FROM postings p
    WHERE EXISTS (SELECT 1 FROM knowledge_bases b WHERE b.id = p.knowledge_base_id AND b.workspace_id = p.workspace_id)
    GROUP BY p.knowledge_base_id, p.lexeme, p.workspace_id
    ON CONFLICT (knowledge_base_id, lexeme, slot) DO UPDATE SET chunks = s.chunks + EXCLUDED.chunks;
    -- A deleted knowledge base (or workspace) takes its lexemes along; they have no foreign key,
    -- whose check would lock the knowledge base row for every lexeme written.
    DELETE FROM keyword_lexemes s
    USING (SELECT DISTINCT knowledge_base_id, workspace_id FROM old_chunks) c
    WHERE s.knowledge_base_id = c.knowledge_base_id AND s.workspace_id = c.workspace_id
      AND NOT EXISTS (SELECT 1 FROM knowledge_bases b WHERE b.id = c.knowledge_base_id AND b.workspace_id = c.workspace_id);
    -- When the knowledge base itself is being deleted, its totals go with it (cascade).
    INSERT INTO keyword_totals AS k (knowledge_base_id, backend, workspace_id, chunks, tokens)
    SELECT c.knowledge_base_id, pg_backend_pid(), c.workspace_id, -count(*),
      -sum(keyword_length(c.search_vector))
    FROM old_chunks c
    WHERE EXISTS (SELECT 1 FROM knowledge_bases b WHERE b.id = c.knowledge_base_id AND b.workspace_id = c.workspace_id)
    GROUP BY c.knowledge_base_id, c.workspace_id
    ON CONFLICT (knowledge_base_id, backend) DO UPDATE SET chunks = k.chunks + EXCLUDED.chunks, tokens = k.tokens + EXCLUDED.tokens;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH terms AS (
      SELECT c.knowledge_base_id, c.workspace_id, c.id, t.lexeme,
        coalesce(array_length(t.positions, 1), 1) AS frequency
      FROM new_chunks c, unnest(c.search_vector) t
    ),
    postings AS (
      SELECT knowledge_base_id, lexeme, id, workspace_id, frequency, sum(frequency) OVER (PARTITION BY id) AS chunk_length
      FROM terms
    ),
    written AS (
      INSERT INTO keyword_postings (knowledge_base_id, lexeme, chunk_id, workspace_id, frequency, chunk_length)
      SELECT knowledge_base_id, lexeme, id, workspace_id, frequency, chunk_length FROM postings
    )
    INSERT INTO keyword_lexemes AS s (knowledge_base_id, lexeme, slot, workspace_id, chunks, max_impact)
    SELECT knowledge_base_id, lexeme, writer_slot, workspace_id, count(*),
      max(keyword_term_weight(frequency, chunk_length::integer, keyword_reference_length()))
    FROM postings
    GROUP BY knowledge_base_id, lexeme, workspace_id
    ON CONFLICT (knowledge_base_id, lexeme, slot) DO UPDATE
      SET chunks = s.chunks + EXCLUDED.chunks, max_impact = greatest(s.max_impact, EXCLUDED.max_impact);
    INSERT INTO keyword_totals AS k (knowledge_base_id, backend, workspace_id, chunks, tokens)
    SELECT c.knowledge_base_id, pg_backend_pid(), c.workspace_id, count(*),
      sum(keyword_length(c.search_vector))
    FROM new_chunks c
    GROUP BY c.knowledge_base_id, c.workspace_id
    ON CONFLICT (knowledge_base_id, backend) DO UPDATE SET chunks = k.chunks + EXCLUDED.chunks, tokens = k.tokens + EXCLUDED.tokens;
  END IF;
  RETURN NULL;
END
$$;

-- The postings written before this migration.
INSERT INTO keyword_lexemes (knowledge_base_id, lexeme, slot, workspace_id, chunks, max_impact)
SELECT knowledge_base_id, lexeme, 0, workspace_id, count(*), max(keyword_term_weight(frequency, chunk_length, keyword_reference_length()))
FROM keyword_postings
GROUP BY knowledge_base_id, lexeme, workspace_id;

-- The top k chunks of the knowledge bases by BM25 for a question, exactly as summing every posting
-- of its lexemes would rank them (scores rounded to 9 decimals, ties by chunk id), with the
-- document frequency of each lexeme that has postings.
--
-- MaxScore: the lexemes are taken rarest first. The postings of the first few (R) are summed per
-- chunk; those partial sums are lower bounds of the chunks' scores, so the k-th largest, θ, is at
-- most the k-th best score. A chunk holding none of R scores at most the sum of the others' upper
-- bounds (idf × max impact × max(1, average length / reference length)); once that sum is below θ
-- no such chunk can enter the top k, and of the chunks seen only those whose partial sum plus that
-- bound reaches θ can: they alone get the rest of their score, from the primary key of the
-- postings. R starts as the fewest rarest lexemes whose bounds outweigh the others'. Otherwise R
-- grows until its postings at least double (so the work stays within twice that of the last try) or
-- holds every lexeme, which is the exhaustive sum. The common lexemes of a question, those with
-- most postings and least weight, are thus mostly looked up per candidate instead of read in full.
CREATE FUNCTION keyword_top_k(p_workspace uuid, p_knowledge_bases uuid[], p_query text, p_k integer)
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
      FROM (SELECT DISTINCT q.lexeme FROM unnest(keyword_document(p_query)) q) q
      JOIN keyword_lexemes l ON l.workspace_id = p_workspace AND l.knowledge_base_id = ANY(p_knowledge_bases) AND l.lexeme = q.lexeme
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
    RETURN QUERY
    WITH partial AS MATERIALIZED (
      SELECT p.chunk_id, p.knowledge_base_id,
        sum(w.idf * keyword_term_weight(p.frequency, p.chunk_length, average_length)) AS score
      FROM unnest(lexemes[1:split], idfs[1:split]) w(lexeme, idf)
      JOIN keyword_postings p ON p.workspace_id = p_workspace AND p.knowledge_base_id = ANY(p_knowledge_bases) AND p.lexeme = w.lexeme
      GROUP BY p.chunk_id, p.knowledge_base_id
    ),
    threshold AS (
      SELECT coalesce((SELECT x.score FROM partial x ORDER BY x.score DESC LIMIT 1 OFFSET p_k - 1), 0) AS theta
    ),
    candidates AS (
      SELECT x.chunk_id, x.knowledge_base_id, x.score
      FROM partial x, threshold t
      WHERE (split = lexeme_count OR rest < t.theta) AND x.score + rest >= t.theta * 0.999999
    ),
    scored AS (
      SELECT c.chunk_id, round((c.score + coalesce(r.score, 0))::numeric, 9)::float8 AS score
      FROM candidates c
      LEFT JOIN LATERAL (
        SELECT sum(w.idf * keyword_term_weight(p.frequency, p.chunk_length, average_length)) AS score
        FROM unnest(lexemes[split + 1:lexeme_count], idfs[split + 1:lexeme_count]) w(lexeme, idf)
        JOIN keyword_postings p ON p.workspace_id = p_workspace AND p.knowledge_base_id = c.knowledge_base_id
          AND p.lexeme = w.lexeme AND p.chunk_id = c.chunk_id
      ) r ON true
    )
    SELECT s.chunk_id, s.score, frequencies FROM scored s ORDER BY s.score DESC, s.chunk_id LIMIT p_k;
    IF FOUND OR split = lexeme_count THEN
      RETURN;
    END IF;
    -- The next try reads at least twice the postings of this one.
    SELECT coalesce(min(i), lexeme_count) INTO split
    FROM generate_subscripts(postings_read, 1) i
    WHERE i > split AND postings_read[i] >= 2 * postings_read[split];
  END LOOP;
END
$$;
