/**
 * The reference pages name only what exists (doc-names.js): every repository path in backticks or
 * links (and each link's heading), and every table, function and trigger they name as such. Checked on a small tree made for
 * the test, with a page of deliberate wrong names, and then on the real pages.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { namedSchemaObjects, wrongDocNames, wrongNames } from './doc-names.js';

describe('the names the pages give', () => {
  let root: string;
  const write = async (path: string, text: string) => {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'lore-doc-names-'));
    await write('migrations/001_foundation.sql', 'CREATE TABLE entries (id uuid);\nCREATE TABLE IF NOT EXISTS chunks (id uuid);\nCREATE OR REPLACE FUNCTION keyword_top_k() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\nCREATE TRIGGER chunks_keyword_insert AFTER INSERT ON chunks EXECUTE FUNCTION keyword_top_k();\n');
    await write('src/core/db/migrate.ts', 'await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version int)`);\n');
    await write('src/features/retrieval/bm25.ts', 'export {};\n');
    await write('docs/retrieval.md', '# Retrieval\n\n## Vectors: USearch HNSW\n\n## The `chunks` table\n\n## Vectors: USearch HNSW\n');
    await write('README.md', '# lore\n');
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('a page whose names all exist has nothing wrong', async () => {
    await write(
      'docs/right.md',
      [
        '# Right',
        'The ranking is in `src/features/retrieval/bm25.ts` (`bm25.ts`, `retrieval/bm25.ts`), beside `src/features/`.',
        'See [retrieval](retrieval.md#vectors-usearch-hnsw), [its table](retrieval.md#the-chunks-table), [again](retrieval.md#vectors-usearch-hnsw-1), [below](#right) and [the README](../README.md).',
        'The `entries` and `chunks` tables, the table `schema_migrations`, the `keyword_top_k()` function and the `chunks_keyword_insert` trigger.',
        'Placeholders and runtime files are not paths: `migrations/NNN_name.sql`, `src/features/<feature>/`, `DATA_DIR/secrets.json`, `widget.js`, `docs/feed.xml`, [a site](https://example.com/x.md).',
        '```text',
        'src/features/retrieval/bm25.ts   the ranker',
        '```',
        '',
      ].join('\n'),
    );
    assert.deepEqual(wrongNames(root, 'docs/right.md'), []);
  });

  test('a deliberate wrong name of each kind is reported, with its line', async () => {
    await write(
      'docs/wrong.md',
      [
        'The ranking is in `src/features/retrieval/keyword-ranking.ts`.',
        'A module named alone: `keyword-ranking.ts`; a folder: `src/features/ranking/`.',
        'See [the keyword engine](keyword-engine.md), [vectors](retrieval.md#vectors) and [above](#nowhere).',
        'Postings are in the `keyword_posting` table; scored by the `keyword_top` function and kept by the `chunks_keyword` trigger.',
        '```text',
        'migrations/099_gone.sql   a migration',
        '```',
        '',
      ].join('\n'),
    );
    assert.deepEqual(wrongNames(root, 'docs/wrong.md'), [
      'docs/wrong.md:1: no src/features/retrieval/keyword-ranking.ts in the repository',
      'docs/wrong.md:2: no file ends in keyword-ranking.ts',
      'docs/wrong.md:2: no src/features/ranking/ in the repository',
      'docs/wrong.md:3: no docs/keyword-engine.md in the repository',
      'docs/wrong.md:3: no heading #vectors in docs/retrieval.md',
      'docs/wrong.md:3: no heading #nowhere in docs/wrong.md',
      'docs/wrong.md:4: the migrations create no table keyword_posting',
      'docs/wrong.md:4: the migrations create no function keyword_top',
      'docs/wrong.md:4: the migrations create no trigger chunks_keyword',
      'docs/wrong.md:6: no migrations/099_gone.sql in the repository',
    ]);
  });

  test('a run of names takes the kind of the word beside it, and a bare identifier none', () => {
    const named = namedSchemaObjects('vacuums `chunks`, `entries` and `keyword_postings` tables; the column `next_attempt_at`; UPDATE of `ingestion_jobs`');
    assert.deepEqual(
      named.map(({ kind, name }) => `${kind} ${name}`),
      ['table chunks', 'table entries', 'table keyword_postings', 'table ingestion_jobs'],
    );
  });

  test('every page of the repository names only what exists', () => {
    assert.deepEqual(wrongDocNames(join(import.meta.dirname, '..')), []);
  });
});
