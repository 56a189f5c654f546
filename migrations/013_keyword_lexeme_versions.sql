-- A version per lexeme of a knowledge base, for the posting lists the API processes keep in memory
-- (src/features/retrieval/keyword/posting-lists.ts). `changes` counts the postings of the lexeme ever
-- written or deleted in a slot; it only grows, so the sum over a lexeme's slots changes whenever
-- any of its postings does, and two reads that see the same sum see the same postings (a later
-- snapshot sees every change an earlier one saw). The trigger below is migration 007's, with the
-- count added to both of its writes of keyword_lexemes. The column is not indexed and the pages
-- keep 30 % free, so the updates stay heap-only as before.
ALTER TABLE keyword_lexemes ADD COLUMN changes bigint NOT NULL DEFAULT 0;

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
    INSERT INTO keyword_lexemes AS s (knowledge_base_id, lexeme, slot, workspace_id, chunks, max_impact, changes)
    SELECT p.knowledge_base_id, p.lexeme, writer_slot, p.workspace_id, -count(*), 0, count(*)
    FROM postings p
    WHERE EXISTS (SELECT 1 FROM knowledge_bases b WHERE b.id = p.knowledge_base_id AND b.workspace_id = p.workspace_id)
    GROUP BY p.knowledge_base_id, p.lexeme, p.workspace_id
    ON CONFLICT (knowledge_base_id, lexeme, slot) DO UPDATE SET chunks = s.chunks + EXCLUDED.chunks, changes = s.changes + EXCLUDED.changes;
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
    INSERT INTO keyword_lexemes AS s (knowledge_base_id, lexeme, slot, workspace_id, chunks, max_impact, changes)
    SELECT knowledge_base_id, lexeme, writer_slot, workspace_id, count(*),
      max(keyword_term_weight(frequency, chunk_length::integer, keyword_reference_length())), count(*)
    FROM postings
    GROUP BY knowledge_base_id, lexeme, workspace_id
    ON CONFLICT (knowledge_base_id, lexeme, slot) DO UPDATE
      SET chunks = s.chunks + EXCLUDED.chunks, max_impact = greatest(s.max_impact, EXCLUDED.max_impact),
        changes = s.changes + EXCLUDED.changes;
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
