-- Lexemes are compared as bytes. Their only order is the postings' and statistics' keys, where
-- no one reads them alphabetically; under the database's linguistic collation every comparison
-- of a key descent went through strcoll. On PostgreSQL with C.UTF-8, keyword_top_k over 100,000
-- chunks took 6 % less (bench/history.md, "Lexemes compared as bytes"); PGlite's databases are
-- created with the C collation already. The column's data does not change: only the two keys are
-- rebuilt.
ALTER TABLE keyword_postings ALTER COLUMN lexeme TYPE text COLLATE "C";
ALTER TABLE keyword_lexemes ALTER COLUMN lexeme TYPE text COLLATE "C";
