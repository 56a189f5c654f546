-- What every chunk insert paid for nothing, or for a detour:
-- 1. The GIN index on chunks.search_vector (migration 002) serves no statement: keyword search
--    reads keyword_postings (migration 004), and search_vector is only unnested by the triggers
--    that fill it. Each insert still added every lexeme of the chunk to the GIN index.
-- 2. A 512-dimension embedding is 2,056 bytes, just over the 2,032-byte threshold from which a
--    row is toasted, so with its text each chunk's embedding went out of line: two TOAST rows and a
--    TOAST index entry written per chunk, and a TOAST index probe to read it back (the cosine of
--    every candidate returned). Rows up to a page (8,160 bytes) now stay whole; longer texts and
--    larger embeddings are still toasted as before. Rows already written keep their layout.
-- bench/history.md, "Chunk writes without the GIN index and TOAST": measured before and after.
DROP INDEX IF EXISTS chunks_search;
ALTER TABLE chunks SET (toast_tuple_target = 8160);
