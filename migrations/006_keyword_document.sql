-- The lexemes of a document or a question for keyword ranking. PostgreSQL's parser reads a
-- dotted name (`copy.deepcopy`, `os.path.join`) as one host or file token, so a question naming
-- `deepcopy` or `join` never matched it: a dot between a letter or digit and a letter is read as
-- a space first. Decimals such as 3.14 keep their dot, as a digit follows it. Questions go through
-- the same function (src/features/retrieval/keyword/).
CREATE FUNCTION keyword_document(document text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT to_tsvector('english', regexp_replace(document, '([[:alnum:]_])\.(?=[[:alpha:]_])', '\1 ', 'g'))
$$;

-- The chunks written before this migration get their documents again, and the statistics are
-- rebuilt from them (the update trigger is off meanwhile, so that nothing is counted twice).
ALTER TABLE chunks DISABLE TRIGGER chunks_keyword_update;
UPDATE chunks AS c
SET search_vector = setweight(keyword_document(e.title || ' ' || array_to_string(c.heading_path, ' ')), 'A') || keyword_document(c.text)
FROM entries AS e
WHERE e.id = c.entry_id AND e.workspace_id = c.workspace_id;
ALTER TABLE chunks ENABLE TRIGGER chunks_keyword_update;
DELETE FROM keyword_postings;
DELETE FROM keyword_totals;
INSERT INTO keyword_postings (knowledge_base_id, lexeme, chunk_id, workspace_id, frequency, chunk_length)
SELECT knowledge_base_id, lexeme, id, workspace_id, frequency, sum(frequency) OVER (PARTITION BY id)
FROM (
  SELECT c.knowledge_base_id, c.workspace_id, c.id, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS frequency
  FROM chunks c, unnest(c.search_vector) t
) terms;
INSERT INTO keyword_totals (knowledge_base_id, backend, workspace_id, chunks, tokens)
SELECT knowledge_base_id, 0, workspace_id, count(*), sum(keyword_length(search_vector))
FROM chunks GROUP BY knowledge_base_id, workspace_id;
