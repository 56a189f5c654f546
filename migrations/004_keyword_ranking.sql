-- Keyword ranking: the statistics BM25 needs, kept by triggers on chunks so that every way a
-- chunk is written or removed (ingestion, updates, entry, knowledge base or workspace deletion)
-- keeps them exact. See docs/keyword-engine.md.

-- The inverted index: one row per lexeme of each chunk, with the lexeme's frequency in the chunk
-- and the chunk's length (its indexed tokens). Rows are only inserted and deleted, never updated,
-- and each belongs to one chunk, so concurrent ingestion workers never wait on each other here.
-- The primary key serves the queries (the postings of a lexeme in a knowledge base, read from the
-- index alone) and the trigger's deletes. No foreign keys: a check per posting would lock the
-- knowledge base row 80 times per chunk; the chunks' triggers delete the postings instead.
CREATE TABLE keyword_postings (
  knowledge_base_id uuid NOT NULL,
  lexeme text NOT NULL,
  chunk_id uuid NOT NULL,
  workspace_id uuid NOT NULL,
  frequency integer NOT NULL,
  chunk_length integer NOT NULL,
  PRIMARY KEY (knowledge_base_id, lexeme, chunk_id) INCLUDE (workspace_id, frequency, chunk_length)
);

-- Chunk count and total length per knowledge base, for idf and the average length. One row per
-- database session (backend) that wrote: a single counter row per knowledge base would be a hot
-- row every concurrent writer waits on until commit; with one row per backend no two open
-- transactions ever update the same row. A knowledge base's figures are the sums of its rows
-- (removals write negative deltas, so a row may be negative; the sum is exact).
CREATE TABLE keyword_totals (
  knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  backend integer NOT NULL,
  workspace_id uuid NOT NULL,
  chunks bigint NOT NULL,
  tokens bigint NOT NULL,
  PRIMARY KEY (knowledge_base_id, backend)
);

-- The indexed tokens of a full-text vector: BM25's document length.
CREATE FUNCTION keyword_length(document tsvector) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(sum(coalesce(array_length(t.positions, 1), 1)), 0) FROM unnest(document) t
$$;

CREATE FUNCTION keyword_index_chunks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    DELETE FROM keyword_postings p
    USING old_chunks c, unnest(c.search_vector) t
    WHERE p.knowledge_base_id = c.knowledge_base_id AND p.lexeme = t.lexeme AND p.chunk_id = c.id
      AND p.workspace_id = c.workspace_id;
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
    )
    INSERT INTO keyword_postings (knowledge_base_id, lexeme, chunk_id, workspace_id, frequency, chunk_length)
    SELECT knowledge_base_id, lexeme, id, workspace_id, frequency, sum(frequency) OVER (PARTITION BY id)
    FROM terms;
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

CREATE TRIGGER chunks_keyword_insert AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION keyword_index_chunks();
CREATE TRIGGER chunks_keyword_update AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION keyword_index_chunks();
CREATE TRIGGER chunks_keyword_delete AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION keyword_index_chunks();

-- The chunks written before this migration. Backend 0 is no session's id.
INSERT INTO keyword_postings (knowledge_base_id, lexeme, chunk_id, workspace_id, frequency, chunk_length)
SELECT knowledge_base_id, lexeme, id, workspace_id, frequency, sum(frequency) OVER (PARTITION BY id)
FROM (
  SELECT c.knowledge_base_id, c.workspace_id, c.id, t.lexeme,
    coalesce(array_length(t.positions, 1), 1) AS frequency
  FROM chunks c, unnest(c.search_vector) t
) terms;
INSERT INTO keyword_totals (knowledge_base_id, backend, workspace_id, chunks, tokens)
SELECT knowledge_base_id, 0, workspace_id, count(*), sum(keyword_length(search_vector))
FROM chunks GROUP BY knowledge_base_id, workspace_id;
